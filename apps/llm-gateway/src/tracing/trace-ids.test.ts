import { describe, expect, it } from 'vitest';
import { TraceIds } from './trace-ids.js';

describe('TraceIds', () => {
  it('cuts valid W3C ids (lowercase hex, 32 and 16 digits, never all zero) and never repeats one across pool refills', () => {
    const ids = new TraceIds();
    const traces = new Set<string>();
    const spans = new Set<string>();
    // 4 kB a pool: 3,000 of each id is 72 kB, many refills.
    for (let i = 0; i < 3_000; i++) {
      traces.add(ids.traceId());
      spans.add(ids.spanId());
    }
    expect(traces.size).toBe(3_000);
    expect(spans.size).toBe(3_000);
    for (const id of traces) expect(id).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^(?!0{16})[0-9a-f]{16}$/);
  });
});
