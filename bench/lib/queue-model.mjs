// What queueing theory expects of the saturation scenario's box, to read the measured shares against:
// a box of `slots` slots, each request holding one for `workMs`, first come first served, and a
// request that has waited `patienceMs` for a slot leaving for the cloud (what `max_concurrency` +
// `queue_timeout` do). An ideal gateway with no overhead, computed, not measured: with a constant
// work time (M/D/c with reneging) Erlang C is only an approximation, so the long-run figure is
// simulated. A 20 s level holds 10 to 80 requests, so a measured share moves by several points
// with the schedule; the figure on the run's own schedule says what a perfect gateway gets there.
import { poissonArrivals } from './open-loop.mjs';

/** The share of `offsets` (arrival times, ms) the box serves. */
export function boxShareOn(offsets, { slots, workMs, patienceMs }) {
  // When each slot is next free (ms), kept sorted: FIFO means the next waiter takes the soonest.
  const freeAt = new Array(slots).fill(0);
  let served = 0;
  for (const arrival of offsets) {
    const start = Math.max(arrival, freeAt[0]);
    if (start - arrival > patienceMs) continue; // left for the next target
    served++;
    freeAt[0] = start + workMs;
    freeAt.sort((a, b) => a - b);
  }
  return offsets.length === 0 ? Number.NaN : served / offsets.length;
}

/** The long-run share: Poisson arrivals at `ratePerS` for `seconds` (about 200,000 at 1 req/s), from seeded `random`. */
export function longRunBoxShare(box, ratePerS, random, seconds = 200_000 / ratePerS) {
  return boxShareOn(poissonArrivals(ratePerS, seconds, random), box);
}
