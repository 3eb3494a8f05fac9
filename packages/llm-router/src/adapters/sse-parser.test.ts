import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser.js';

const enc = (s: string) => new TextEncoder().encode(s);

describe('SseParser', () => {
  it('yields the data of each event', () => {
    const p = new SseParser();
    expect(p.push(enc('data: {"a":1}\n\ndata: [DONE]\n\n'))).toEqual(['{"a":1}', '[DONE]']);
  });

  it('reassembles events split at any byte, including inside UTF-8 sequences', () => {
    const text = 'data: {"c":"héllo ✓"}\r\n\r\n: keep-alive\n\nevent: x\ndata: two\ndata: lines\n\n';
    const bytes = enc(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const p = new SseParser();
      const out = [...p.push(bytes.subarray(0, cut)), ...p.push(bytes.subarray(cut)), ...p.end()];
      expect(out).toEqual(['{"c":"héllo ✓"}', 'two\nlines']);
    }
  });

  it('accepts data without a space after the colon and a final event without blank line', () => {
    const p = new SseParser();
    expect(p.push(enc('data:x\n'))).toEqual([]);
    expect(p.end()).toEqual(['x']);
  });

  it('ignores comments and unknown fields', () => {
    const p = new SseParser();
    expect(p.push(enc(':ping\nid: 3\nretry: 10\n\n'))).toEqual([]);
  });

  it('an endless line fails with response_too_large at max_stream_event_bytes, and is scanned in linear time', () => {
    const p = new SseParser(1024 * 1024);
    p.push(enc('data: {"a":1}\n\n'));
    const chunk = enc('x'.repeat(16 * 1024));
    const started = performance.now();
    let error: unknown;
    let pushed = 0;
    try {
      for (; pushed < 1_000; pushed++) p.push(chunk);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'response_too_large', message: 'a stream event exceeds max_stream_event_bytes (1048576 bytes)' });
    expect(pushed).toBe(64); // 64 × 16 KiB = 1 MiB held, the 65th chunk is one too many
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('a long line under the bound still arrives whole, joined once', () => {
    const p = new SseParser(1024 * 1024);
    const value = 'y'.repeat(500_000);
    const bytes = enc(`data: ${value}\n\n`);
    const out: string[] = [];
    for (let i = 0; i < bytes.length; i += 1000) out.push(...p.push(bytes.subarray(i, i + 1000)));
    expect(out).toEqual([value]);
  });

  it('many data lines of one event count together against the bound', () => {
    const p = new SseParser(1_000);
    expect(() => {
      for (let i = 0; i < 100; i++) p.push(enc('data: ' + 'z'.repeat(50) + '\n'));
    }).toThrow(/max_stream_event_bytes/);
  });
});
