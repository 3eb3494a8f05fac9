import type { RateLimit, RateUnit } from '../types.js';
import type { ConfigPath } from './config-source.js';
import type { ConfigReader } from './reader.js';

/** The rate keys, in the order a target's windows are checked and shown. */
export const RATE_UNITS: readonly RateUnit[] = ['rpm', 'tpm'];

/**
 * `rpm: N` / `tpm: N` of a provider (all its models share one window) or of a
 * chain entry (that target counts alone, instead of in its provider's window);
 * `inherited`: the provider's, for a chain entry that names only one of them.
 * Undefined when none applies (the attempt loop then does no accounting).
 */
export function readRateLimits(
  reader: ConfigReader,
  raw: Readonly<Record<string, unknown>>,
  path: ConfigPath,
  kind: 'provider' | 'target',
  name: string,
  alias: string | undefined,
  inherited?: readonly RateLimit[],
): readonly RateLimit[] | undefined {
  const limits: RateLimit[] = [];
  for (const unit of RATE_UNITS) {
    const value = raw[unit];
    if (value === undefined || value === null) {
      const theirs = inherited?.find((r) => r.unit === unit);
      if (theirs !== undefined) limits.push(theirs);
      continue;
    }
    const limit = reader.count(value, [...path, unit], `${unit} of ${kind} ${name}`, 1, alias);
    limits.push(Object.freeze({ key: `${unit}:${kind}:${name}`, unit, kind, name, limit }));
  }
  return limits.length === 0 ? undefined : Object.freeze(limits);
}
