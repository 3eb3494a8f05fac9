/**
 * `price: { input, output, cached_input? }` on a provider or a chain entry, in
 * USD per million tokens, and what a call costs with it. No price means the
 * cost is unknown (undefined), never 0.
 */
import type { Price, Usage } from '../types.js';
import type { ConfigPath } from './config-source.js';
import type { ConfigReader } from './reader.js';
import { PRICE_KEYS } from './schema.js';

const TOKENS_PER_PRICE_UNIT = 1_000_000;

export function readPrice(reader: ConfigReader, value: unknown, path: ConfigPath, what: string, alias?: string): Price | undefined {
  if (value === undefined || value === null) return undefined;
  const map = reader.map(value, path, `${what} price ({ input, output, cached_input }, USD per million tokens)`, alias);
  reader.keys(map, PRICE_KEYS, path, `${what} price`, alias);
  const amount = (key: (typeof PRICE_KEYS)[number], required: boolean): number | undefined => {
    const raw = map[key];
    if (raw === undefined || raw === null) {
      if (required) reader.fail(path, `${what} price needs ${key} (USD per million tokens)`, alias, true);
      return undefined;
    }
    const number = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
    if (!Number.isFinite(number) || number < 0) {
      reader.fail([...path, key], `${what} price ${key} must be a number ≥ 0 (USD per million tokens), got ${JSON.stringify(raw)}`, alias);
    }
    return number;
  };
  return Object.freeze({ input: amount('input', true)!, output: amount('output', true)!, cachedInput: amount('cached_input', false) });
}

/** USD for the tokens of one call; undefined when the price or the usage is unknown. */
export function costOf(usage: Usage | undefined, price: Price | undefined): number | undefined {
  if (usage === undefined || price === undefined) return undefined;
  const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
  const uncached = usage.prompt_tokens - cached;
  return (
    (uncached * price.input + cached * (price.cachedInput ?? price.input) + usage.completion_tokens * price.output) / TOKENS_PER_PRICE_UNIT
  );
}
