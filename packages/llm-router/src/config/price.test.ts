import { describe, expect, it } from 'vitest';
import { isRouterError } from '../errors.js';
import { parseConfig } from './load-config.js';
import { costOf } from './price.js';
import { withLongForm } from './test-configs.js';

const env = { GROQ_API_KEY: 'gsk-secret', OPENROUTER_API_KEY: 'or-secret' };
const HEAD = `providers:
  groq: { price: { input: 0.05, output: 0.08 } }
`;

describe('price config', () => {
  it('a target takes its own price, else its provider\'s, else none', () => {
    const snapshot = parseConfig(
      withLongForm(
        `    chain:
      - { target: groq/llama-3.3-70b-versatile, price: { input: 0.59, output: 0.79, cached_input: 0.3 } }
      - groq/llama-3.1-8b-instant
      - openrouter/anthropic/claude-3.5-haiku
`,
        HEAD,
      ),
      { env },
    );
    const chain = snapshot.aliases.get('mana/long-form')!.chain;
    expect(chain.map((t) => t.price)).toEqual([
      { input: 0.59, output: 0.79, cachedInput: 0.3 },
      { input: 0.05, output: 0.08, cachedInput: undefined },
      undefined,
    ]);
  });

  it.each([
    ['a negative amount', '{ input: -1, output: 1 }', 'input must be a number ≥ 0'],
    ['a missing output', '{ input: 1 }', 'needs output'],
    ['an unknown key', '{ input: 1, output: 1, currency: EUR }', 'unknown key "currency"'],
    ['text', '{ input: cheap, output: 1 }', 'input must be a number ≥ 0'],
  ])('refuses %s with a clear invalid_config message', (_, price, message) => {
    let error: unknown;
    try {
      parseConfig(withLongForm(`    chain: [groq/llama-3.1-8b-instant]\n`, `providers:\n  groq: { price: ${price} }\n`), { env });
    } catch (e) {
      error = e;
    }
    expect(isRouterError(error)).toBe(true);
    expect((error as Error).message).toContain(message);
  });
});

describe('costOf', () => {
  const price = { input: 2, output: 8, cachedInput: 0.5 };

  it('is tokens × USD per million tokens, cached prompt tokens at the cached price', () => {
    expect(costOf({ prompt_tokens: 1_000, completion_tokens: 500, total_tokens: 1_500 }, price)).toBeCloseTo(0.006, 12);
    expect(costOf({ prompt_tokens: 1_000, completion_tokens: 0, total_tokens: 1_000, cached_tokens: 400 }, price)).toBeCloseTo(0.0014, 12);
  });

  it('is unknown (undefined), never 0, without a price or without usage', () => {
    expect(costOf({ prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }, undefined)).toBeUndefined();
    expect(costOf(undefined, price)).toBeUndefined();
  });
});
