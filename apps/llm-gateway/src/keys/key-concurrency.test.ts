import { describe, expect, it } from 'vitest';
import { KeyConcurrency } from './key-concurrency.js';

describe('KeyConcurrency', () => {
  it('gives at most max slots per key; a lease released twice frees one slot', () => {
    const slots = new KeyConcurrency();
    const a = slots.acquire('k', 2)!;
    const b = slots.acquire('k', 2)!;
    expect(slots.acquire('k', 2)).toBeUndefined();
    expect(slots.acquire('other', 1)).toBeDefined();
    a.release();
    a.release();
    expect(slots.count('k')).toBe(1);
    expect(slots.acquire('k', 2)).toBeDefined();
    expect(slots.acquire('k', 2)).toBeUndefined();
    b.release();
    expect(slots.count('k')).toBe(1);
  });
});
