/** @mana/llm-router — public API (re-exports only). */
export type * from './types.js';
export { RouterError, isRouterError } from './errors.js';
export type { RouterErrorCode, RouterErrorOptions } from './errors.js';
export { parseConfig, loadConfigFile, DEFAULT_SETTINGS } from './config/load-config.js';
export type { ParseConfigOptions } from './config/load-config.js';
export { resolveModel, listModels } from './config/alias-registry.js';
export { parseSize } from './config/sizes.js';
export { MAX_MODEL_ID_LENGTH, modelIdProblem } from './config/targets.js';
export type { Resolution } from './config/alias-registry.js';
export { buildPlan } from './plan/build-plan.js';
export type { PlanContext } from './plan/build-plan.js';
export { HealthCache } from './health/health-cache.js';
export { createRouter } from './router.js';
export type { Router, RouterOptions } from './router.js';
