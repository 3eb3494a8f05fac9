/** @mana/llm-router — public API (re-exports only). */
export type * from './types.js';
export { RouterError, isRouterError } from './errors.js';
export type { RouterErrorCode, RouterErrorOptions } from './errors.js';
export { ATTEMPT_REASONS, CANCEL_REASONS, CAPACITY_REASONS, FAILURE_REASONS, SKIP_REASONS } from './attempt/attempt-reasons.js';
export type { AttemptReason, HttpStatusReason, UnconfiguredReason } from './attempt/attempt-reasons.js';
export { parseConfig, loadConfigFile, DEFAULT_SETTINGS } from './config/load-config.js';
export type { ParseConfigOptions } from './config/load-config.js';
export { ConfigFileError, MAX_CONFIG_BYTES, readConfigFile } from './config/read-config-file.js';
export { SECRET_NAME, parseSecrets, readSecretsFile, secretsPathFor, withSecrets } from './config/secrets-file.js';
export { ALIAS_KEYS, ALIAS_NAME, FOREIGN_ALIAS_NAME, PROVIDER_KEYS, PROVIDER_NAME, STRATEGIES, TARGET_KEYS } from './config/schema.js';
export { BUILT_IN_PROVIDERS } from './config/built-in-providers.js';
export { splitTarget } from './config/targets.js';
export { isPlainObject } from './plain-object.js';
export type { Env } from './config/interpolate.js';
export { envReferenceName, envReferences } from './config/interpolate.js';
export { CREDENTIAL_HEADERS, isCredentialHeader } from './config/provider-headers.js';
export { redactUrl } from './health/redact.js';
export { resolveModel, listModels } from './config/alias-registry.js';
export { parseSize } from './config/sizes.js';
export { MAX_DURATION_MS, parseDuration } from './config/durations.js';
export { costOf } from './config/price.js';
export { MAX_MODEL_ID_LENGTH, modelIdProblem } from './config/targets.js';
export type { Resolution } from './config/alias-registry.js';
export { MAX_UPSTREAM_DELAY_MS } from './attempt/classify-error.js';
export {
  defaultSchemaWorkers,
  SCHEMA_JOB_BUDGET_MS,
  SCHEMA_QUEUE_PER_CALLER,
  SCHEMA_QUEUE_TOTAL,
  SCHEMA_WORKERS_MAX_DEFAULT,
} from './attempt/schema-checker.js';
export type { SchemaCheckerOptions } from './attempt/schema-checker.js';
export { buildPlan } from './plan.js';
export type { PlanContext } from './plan.js';
export { HealthCache } from './health/health-cache.js';
export { createRouter } from './router.js';
export { estimateTokens } from './context/estimate-tokens.js';
export { estimatePromptTokens } from './context/count-tokens.js';
export type { TokenCount } from './context/count-tokens.js';
export type { Router, RouterOptions } from './router.js';
