/**
 * Durations in the config and on the command line are written for people
 * ("30s", "500ms", "2m", "1h", "30d") or as a plain number of milliseconds.
 * Everything inside the router is ms. One parser for both, so the syntax is
 * defined once.
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/i;

/**
 * The longest duration accepted: 10 years. Every duration ends up added to
 * `Date.now()` somewhere (unhealthy periods, cooldowns, retention); past about
 * 270,000 years that sum is no valid Date and every request touching it would
 * throw. A bound far below that keeps operator typos (`99999999999h`) from
 * doing what an absurd upstream Retry-After once did.
 */
export const MAX_DURATION_MS = 10 * 365 * 86_400_000; // 10 years

/**
 * Parses a duration into milliseconds, or returns undefined when the value is
 * not a non-negative duration up to MAX_DURATION_MS (negative numbers, unknown
 * units, garbage, absurd sizes).
 */
export function parseDuration(value: unknown): number | undefined {
  let ms: number;
  if (typeof value === 'number') {
    ms = Math.round(value);
  } else if (typeof value === 'string') {
    const match = DURATION.exec(value.trim());
    if (match === null) return undefined;
    const unit = (match[2] ?? 'ms').toLowerCase() as keyof typeof UNIT_MS;
    ms = Math.round(Number(match[1]) * UNIT_MS[unit]);
  } else {
    return undefined;
  }
  return Number.isFinite(ms) && ms >= 0 && ms <= MAX_DURATION_MS ? ms : undefined;
}
