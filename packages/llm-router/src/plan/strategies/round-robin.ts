import type { TargetConfig } from '../../types.js';
import type { PlanContext } from '../plan-context.js';

/** round_robin: request n starts at target n mod length, spreading load evenly. */
export function roundRobinStart(chain: readonly TargetConfig[], ctx: PlanContext): number {
  const length = chain.length;
  if (length === 0) return 0;
  const rotation = Number.isFinite(ctx.rotation) ? Math.trunc(ctx.rotation) : 0;
  return ((rotation % length) + length) % length;
}
