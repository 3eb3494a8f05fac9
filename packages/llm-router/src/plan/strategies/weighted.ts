import type { TargetConfig } from '../../types.js';
import type { PlanContext } from '../plan-context.js';
import { weightedIndex } from '../weighted-choice.js';

/** weighted: a random start, each target as likely as its weight. */
export function weightedStart(chain: readonly TargetConfig[], ctx: PlanContext): number {
  return Math.max(0, weightedIndex(chain.map((target) => target.weight), ctx.random));
}
