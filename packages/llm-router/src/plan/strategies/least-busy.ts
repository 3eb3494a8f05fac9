import type { TargetConfig } from '../../types.js';
import type { PlanContext } from '../plan-context.js';

/** least_busy: the target with the fewest requests in flight in this process; ties go to the earlier one. */
export function leastBusyStart(chain: readonly TargetConfig[], ctx: PlanContext): number {
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
}
