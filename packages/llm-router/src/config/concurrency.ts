import type { ConcurrencyLimit } from '../types.js';
import type { ConfigPath } from './config-source.js';
import type { ConfigReader } from './reader.js';

/**
 * `max_concurrency: N` of a provider (all its models count together) or of a
 * chain entry (that target counts alone, instead of in its provider's count);
 * absent: undefined (unlimited).
 */
export function readConcurrency(
  reader: ConfigReader,
  value: unknown,
  path: ConfigPath,
  kind: 'provider' | 'target',
  name: string,
  alias: string | undefined,
): ConcurrencyLimit | undefined {
  if (value === undefined || value === null) return undefined;
  const limit = reader.count(value, path, `max_concurrency of ${kind} ${name}`, 1, alias);
  return Object.freeze({ key: `${kind}:${name}`, kind, name, limit });
}
