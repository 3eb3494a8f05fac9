import { describe, expect, it } from 'vitest';
import { NdjsonParser } from './ndjson-parser.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('NdjsonParser', () => {
  it('splits lines across chunk boundaries and skips blank lines', () => {
    const bytes = enc('{"a":"ü"}\n\n{"b":2}\r\n{"c":3}');
    for (let cut = 1; cut < bytes.length; cut++) {
      const p = new NdjsonParser();
      const out = [...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut)), ...p.end()];
      expect(out).toEqual(['{"a":"ü"}', '{"b":2}', '{"c":3}']);
    }
  });
});
