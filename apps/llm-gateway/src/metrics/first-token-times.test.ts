import { describe, expect, it } from 'vitest';
import { FirstTokenTimes } from './first-token-times.js';

describe('FirstTokenTimes', () => {
  it('is null for a target that answered no stream yet, the first time as it is', () => {
    const times = new FirstTokenTimes();
    expect(times.recentMs('gpu/m')).toBeNull();
    times.observe('gpu/m', 250.4);
    expect(times.recentMs('gpu/m')).toBe(250);
    expect(times.recentMs('cloud/m')).toBeNull();
  });

  it('follows a box that starts to queue within a few answers, and one slow answer moves it by a fifth', () => {
    const times = new FirstTokenTimes();
    times.observe('gpu/m', 200);
    times.observe('gpu/m', 1_200);
    expect(times.recentMs('gpu/m')).toBe(400);
    for (let i = 0; i < 10; i++) times.observe('gpu/m', 5_000);
    expect(times.recentMs('gpu/m')).toBeGreaterThan(4_500);
  });
});
