import { describe, expect, it } from 'vitest';
import { isoTime } from './logging.js';

describe('isoTime', () => {
  it("writes the same text as pino's isoTime, across seconds and back", () => {
    const base = Date.UTC(2026, 10, 30, 7, 22, 5);
    for (const now of [base, base + 7, base + 42, base + 999, base + 1000, base + 61_001, base - 1, base + 5, 0, Date.now()]) {
      expect(isoTime(now)).toBe(`,"time":"${new Date(now).toISOString()}"`);
    }
  });
});
