import type { TargetConfig } from '../../types.js';
import type { PlanContext } from '../plan-context.js';

/** failover: always start with the first listed target. */
export function failoverStart(_chain: readonly TargetConfig[], _ctx: PlanContext): number {
  return 0;
}
