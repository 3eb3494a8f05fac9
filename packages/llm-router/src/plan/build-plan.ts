import type { AliasConfig, Strategy, TargetConfig } from '../types.js';
import type { PlanContext } from './plan-context.js';
import { failoverStart } from './strategies/failover.js';
import { leastBusyStart } from './strategies/least-busy.js';
import { roundRobinStart } from './strategies/round-robin.js';
import { weightedStart } from './strategies/weighted.js';

export type { PlanContext } from './plan-context.js';

/** A strategy only picks the first target; the rest of the plan is shared. */
type StartPicker = (chain: readonly TargetConfig[], ctx: PlanContext) => number;

const START: Readonly<Record<Strategy, StartPicker>> = {
  failover: failoverStart,
  round_robin: roundRobinStart,
  weighted: weightedStart,
  least_busy: leastBusyStart,
};

/**
 * The order in which to try an alias's targets for one request: the target the
 * strategy picks, then the others in listed order as fallbacks (the operator
 * listed them in order of preference). Pure: health is applied later by the
 * attempt loop, which skips unhealthy members as it walks the plan.
 */
export function buildPlan(alias: AliasConfig, ctx: PlanContext): TargetConfig[] {
  const chain = alias.chain;
  if (chain.length <= 1) return [...chain];
  const start = START[alias.strategy](chain, ctx);
  const first = chain[start];
  if (first === undefined) return [...chain];
  return [first, ...chain.filter((_, index) => index !== start)];
}
