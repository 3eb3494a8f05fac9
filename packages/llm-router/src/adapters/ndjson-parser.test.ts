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

  it('an endless line fails with response_too_large in linear time; under the bound it arrives whole', () => {
    const p = new NdjsonParser(256 * 1024);
    const chunk = enc('x'.repeat(8 * 1024));
    const started = performance.now();
    expect(() => {
      for (let i = 0; i < 10_000; i++) p.push(chunk);
    }).toThrow(expect.objectContaining({ code: 'response_too_large' }));
    expect(performance.now() - started).toBeLessThan(200);
    const q = new NdjsonParser(256 * 1024);
    const line = '{"a":"' + 'b'.repeat(200_000) + '"}';
    const out: string[] = [];
    for (let i = 0; i < line.length; i += 4096) out.push(...q.push(enc(line.slice(i, i + 4096))));
    out.push(...q.push(enc('\n{"c":1}')), ...q.end());
    expect(out).toEqual([line, '{"c":1}']);
  });
});
