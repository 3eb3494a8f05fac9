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
});
