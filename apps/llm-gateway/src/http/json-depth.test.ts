import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth } from './json-depth.js';
import { MAX_JSON_DEPTH } from './validate-chat.js';

const nested = (depth: number, open = '[', close = ']'): string => open.repeat(depth) + close.repeat(depth);

describe('exceedsJsonDepth', () => {
  it('counts arrays and objects, up to and past the limit', () => {
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    const objects = '{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1);
    expect(exceedsJsonDepth(objects, MAX_JSON_DEPTH)).toBe(true);
    // Siblings do not add up: depth, not count.
    expect(exceedsJsonDepth('[' + '[1],'.repeat(1_000) + '[1]]', 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ messages: [{ role: 'user', content: '[[[[{{{{ "quoted [[[[" \\" \\\\' + '['.repeat(500) }] });
    expect(exceedsJsonDepth(text, 3)).toBe(false);
    // A string ending in an escaped backslash closes there; the brackets after it count.
    expect(exceedsJsonDepth('["a\\\\", [[[1]]]]', 3)).toBe(true);
    expect(exceedsJsonDepth('["a\\", [[[1]]]]', 3)).toBe(false); // the quote is escaped: the rest is inside the string
  });

  it('matches JSON.parse on the depth of real values', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) deep = [deep];
    expect(exceedsJsonDepth(JSON.stringify({ messages: [{ role: 'user', content: 'x', extra: deep }] }), MAX_JSON_DEPTH)).toBe(true);
    expect(exceedsJsonDepth(JSON.stringify({ a: [{ b: 1 }] }), MAX_JSON_DEPTH)).toBe(false);
  });

  it('is linear: 20 MB of brackets, or of flat JSON, in bounded time (no parse), even on a loaded machine', () => {
    const deep = nested(10_000_000);
    let started = performance.now();
    expect(exceedsJsonDepth(deep, MAX_JSON_DEPTH)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000); // ~12 ms on an idle machine; JSON.parse took ~4.5 s
    const flat = '[' + '"\\\\\\"",'.repeat(2_000_000) + '1]'; // escapes everywhere
    started = performance.now();
    expect(exceedsJsonDepth(flat, MAX_JSON_DEPTH)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
