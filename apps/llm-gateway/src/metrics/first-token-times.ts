/**
 * A recent time to first token per target, for the views (`/v1/aliases`,
 * `/v1/health`): how long the target itself took from its call's start to its
 * first content delta, on the streams it answered. An exponentially weighted
 * moving average, so a box that starts to queue shows it within a few requests
 * while one slow answer does not swing it.
 *
 * Only streams count: a whole answer's time says nothing of its first token.
 */
const WEIGHT_OF_NEWEST = 0.2;

export class FirstTokenTimes {
  private readonly averageMs = new Map<string, number>();

  /** A stream answered by `target` sent its first content delta `ms` after its call started. */
  observe(target: string, ms: number): void {
    const before = this.averageMs.get(target);
    this.averageMs.set(target, before === undefined ? ms : before + WEIGHT_OF_NEWEST * (ms - before));
  }

  /** The average in whole milliseconds; null while no stream of `target` was answered. */
  recentMs(target: string): number | null {
    const ms = this.averageMs.get(target);
    return ms === undefined ? null : Math.round(ms);
  }
}
