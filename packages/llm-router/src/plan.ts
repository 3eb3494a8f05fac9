import type { AliasConfig, Strategy, TargetConfig } from './types.js';

/** What a strategy may look at besides the alias itself. Everything is injected so plans are pure and testable. */
export interface PlanContext {
  /** Uniform random number in [0, 1) (Math.random in production, a seeded PRNG in tests). */
  readonly random: () => number;
  /** The round_robin counter of this alias: how many requests it has planned before. */
  readonly rotation: number;
  /** Requests currently running against a target id in this process. */
  readonly inFlight: (targetId: string) => number;
}

/** A strategy only picks the first target; the rest of the plan is shared. */
type StartPicker = (chain: readonly TargetConfig[], ctx: PlanContext) => number;

const START: Readonly<Record<Strategy, StartPicker>> = {
  // Always the first listed target.
  failover: () => 0,
  // Request n starts at target n mod length, spreading load evenly.
  round_robin: (chain, ctx) => {
    const length = chain.length;
    if (length === 0) return 0;
    const rotation = Number.isFinite(ctx.rotation) ? Math.trunc(ctx.rotation) : 0;
    return ((rotation % length) + length) % length;
  },
  // A random start, each target as likely as its weight.
  weighted: (chain, ctx) => Math.max(0, weightedIndex(chain.map((target) => target.weight), ctx.random)),
  // The fewest requests in flight in this process; ties go to the earlier one.
  least_busy: (chain, ctx) => {
    let best = 0;
    let fewest = Number.POSITIVE_INFINITY;
    chain.forEach((target, index) => {
      const busy = ctx.inFlight(target.id);
      if (busy < fewest) {
        fewest = busy;
        best = index;
      }
    });
    return best;
  },
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

/**
 * Picks an index with probability proportional to its weight, using one draw
 * of `random` in [0, 1). The one place weighted choice is written.
 * Returns -1 for an empty list; items with weight ≤ 0 are never picked unless
 * all are (then the first is).
 */
export function weightedIndex(weights: readonly number[], random: () => number): number {
  if (weights.length === 0) return -1;
  const total = weights.reduce((sum, weight) => sum + Math.max(0, weight), 0);
  if (!(total > 0)) return 0;
  let point = random() * total;
  for (let index = 0; index < weights.length; index++) {
    const weight = Math.max(0, weights[index] ?? 0);
    if (point < weight) return index;
    point -= weight;
  }
  // Floating-point rounding can leave `point` a hair above the last bucket.
  for (let index = weights.length - 1; index >= 0; index--) if ((weights[index] ?? 0) > 0) return index;
  return 0;
}
