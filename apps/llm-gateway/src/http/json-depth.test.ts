import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth, MAX_JSON_DEPTH, scanJsonText } from './json-depth.js';

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

describe('scanJsonText: the top-level model value', () => {
  const span = (text: string): string | undefined => {
    const scan = scanJsonText(text, MAX_JSON_DEPTH);
    return scan.model === undefined ? undefined : text.slice(scan.model.start, scan.model.end);
  };

  it('finds the one top-level model string, quotes included, wherever it stands', () => {
    expect(span('{"model":"mana/fast-text","messages":[]}')).toBe('"mana/fast-text"');
    expect(span('{ "messages": [{"role": "user", "content": "{\\"model\\": \\"x\\"}", "model": "inner"}],\n  "model" : "a\\"b" }')).toBe('"a\\"b"');
    expect(span(JSON.stringify({ temperature: 1, metadata: { model: 'nested' }, model: 'groq/llama' }))).toBe('"groq/llama"');
  });

  it('gives no span when relying on one could disagree with JSON.parse', () => {
    expect(span('{"messages":[]}')).toBeUndefined(); // no model
    expect(span('{"model":null,"messages":[]}')).toBeUndefined(); // not a string
    expect(span('{"model":"a","messages":[],"model":"b"}')).toBeUndefined(); // twice: JSON.parse keeps "b"
    expect(span('{"model":"a","mod\\u0065l":"b"}')).toBeUndefined(); // an escaped key that spells model
    expect(span('{"model":"a","\\u006d\\u006f\\u0064\\u0065\\u006c":"b"}')).toBeUndefined();
    expect(span('{"model":"a","x\\ty":1}')).toBeUndefined(); // any short escaped key, to be safe
    // Keys that cannot spell model change nothing: other names, escapes in keys too long to be it.
    expect(span(`{"model":"a","models":"b","${'x'.repeat(40)}\\t":1}`)).toBe('"a"');
  });

  it('still refuses what is too deep', () => {
    expect(scanJsonText(`{"model":"a","x":${nested(MAX_JSON_DEPTH)}}`, MAX_JSON_DEPTH).tooDeep).toBe(true);
    expect(scanJsonText(`{"model":"a","x":${nested(MAX_JSON_DEPTH - 1)}}`, MAX_JSON_DEPTH)).toMatchObject({ tooDeep: false, model: { start: 9 } });
  });
});
