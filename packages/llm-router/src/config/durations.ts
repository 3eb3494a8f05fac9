/**
 * Durations in the config are written for people ("30s", "500ms", "2m", "1h")
 * or as a plain number of milliseconds. Everything inside the router is ms.
 */

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/;

/**
 * Parses a duration into milliseconds, or returns undefined when the value is
 * not a non-negative duration (negative numbers, unknown units, garbage).
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const match = DURATION.exec(value.trim());
  if (match === null) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? 'ms') as keyof typeof UNIT_MS;
  const ms = Math.round(amount * UNIT_MS[unit]);
  return Number.isFinite(ms) ? ms : undefined;
}
