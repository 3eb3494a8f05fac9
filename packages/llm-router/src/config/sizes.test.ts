import { describe, expect, it } from 'vitest';
import { parseSize } from './sizes.js';

describe('parseSize', () => {
  it('reads bytes and binary units, refuses zero, negatives and junk', () => {
    expect(parseSize('1024')).toBe(1024);
    expect(parseSize('20mb')).toBe(20 * 1024 * 1024);
    expect(parseSize('1.5KB')).toBe(1536);
    expect(parseSize(' 1gb ')).toBe(1024 ** 3);
    expect(parseSize('0')).toBeUndefined();
    expect(parseSize('-1')).toBeUndefined();
    expect(parseSize('10 parsecs')).toBeUndefined();
    expect(parseSize('9'.repeat(30))).toBeUndefined(); // not a safe integer
  });
});
