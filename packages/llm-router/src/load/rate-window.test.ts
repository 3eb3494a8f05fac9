import { describe, expect, it } from 'vitest';
import type { RateLimit } from '../types.js';
import { RateBook } from './rate-window.js';

const rpm = (limit: number): RateLimit => ({ key: 'rpm:provider:cloud', unit: 'rpm', kind: 'provider', name: 'cloud', limit });
const tpm = (limit: number): RateLimit => ({ key: 'tpm:provider:cloud', unit: 'tpm', kind: 'provider', name: 'cloud', limit });
const identity = (total: number): number => total;

/** A clock the test moves; the book's own timers only wake waiters, which the tests that wait use real time for. */
function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('an rpm window (a minute, sliding)', () => {
  it('admits N requests in a minute, then none until the oldest is a minute old', () => {
    const c = clock();
    const book = new RateBook(identity, c.now);
    const limit = rpm(3);
    for (let i = 0; i < 3; i++) {
      expect(book.tryCharge(limit, 1)).toBeDefined();
      c.advance(10_000);
    }
    expect(book.tryCharge(limit, 1)).toBeUndefined();
    expect(book.state(limit)).toEqual({ used: 3, limit: 3, queued: 0 });
    c.advance(30_000); // 60 s after the first charge: it has left the window, the other two have not
    expect(book.state(limit).used).toBe(2);
    expect(book.tryCharge(limit, 1)).toBeDefined();
    expect(book.tryCharge(limit, 1)).toBeUndefined();
  });

  it('a refund gives the charge back at once (a request that never left)', () => {
    const book = new RateBook(identity, clock().now);
    const limit = rpm(1);
    const refund = book.tryCharge(limit, 1)!;
    expect(book.hasRoom(limit, 1)).toBe(false);
    refund();
    refund(); // twice is once
    expect(book.state(limit).used).toBe(0);
    expect(book.tryCharge(limit, 1)).toBeDefined();
  });

  it('takes the effective limit from the replicas hook, asked with the unit', () => {
    const asked: unknown[] = [];
    const book = new RateBook((total, subject) => (asked.push({ total, ...subject }), total / 3), clock().now);
    expect(book.state(rpm(7)).limit).toBe(2); // a third of 7, whole requests
    expect(asked).toEqual([{ total: 7, kind: 'provider', name: 'cloud', limit: 'rpm' }]);
  });
});

describe('a tpm window', () => {
  it('charges a request its token estimate and refuses one that would pass the limit', () => {
    const c = clock();
    const book = new RateBook(identity, c.now);
    const limit = tpm(1_000);
    expect(book.tryCharge(limit, 600)).toBeDefined();
    expect(book.hasRoom(limit, 500)).toBe(false);
    expect(book.hasRoom(limit, 400)).toBe(true);
    expect(book.tryCharge(limit, 400)).toBeDefined();
    expect(book.state(limit)).toEqual({ used: 1_000, limit: 1_000, queued: 0 });
    c.advance(60_000);
    expect(book.state(limit).used).toBe(0);
  });

  it('caps a request larger than the whole limit at the limit: it goes alone into an empty window, never into a used one', () => {
    const c = clock();
    const book = new RateBook(identity, c.now);
    const limit = tpm(1_000);
    const small = book.tryCharge(limit, 10)!;
    expect(book.hasRoom(limit, 5_000)).toBe(false);
    small();
    expect(book.tryCharge(limit, 5_000)).toBeDefined();
    expect(book.state(limit).used).toBe(1_000);
  });
});

describe('waiting for the window', () => {
  const WINDOW_MS = 300;

  it('serves waiters in arrival order as charges leave the window, and a small request does not overtake a large one', async () => {
    const book = new RateBook(identity, Date.now, WINDOW_MS);
    const limit = tpm(100);
    const started = Date.now();
    book.tryCharge(limit, 100);
    const order: string[] = [];
    const large = book.acquire(limit, 80, 5_000, undefined).then((r) => (order.push('large'), r));
    const small = book.acquire(limit, 10, 5_000, undefined).then((r) => (order.push('small'), r));
    expect(book.state(limit).queued).toBe(2);
    expect(book.hasRoom(limit, 1)).toBe(false); // others wait ahead
    expect(await large).toBeDefined();
    expect(await small).toBeDefined();
    expect(order).toEqual(['large', 'small']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(WINDOW_MS - 5);
    expect(book.state(limit)).toMatchObject({ used: 90, queued: 0 });
  });

  it('gives up after its timeout (undefined) and leaves the line; the next one moves up', async () => {
    const book = new RateBook(identity, Date.now, WINDOW_MS);
    const limit = rpm(1);
    book.tryCharge(limit, 1);
    const impatient = book.acquire(limit, 1, 50, undefined);
    const patient = book.acquire(limit, 1, 5_000, undefined);
    expect(await impatient).toBeUndefined();
    expect(book.state(limit).queued).toBe(1);
    expect(await patient).toBeDefined();
  });

  it('a waiter whose signal fires leaves the line at once (aborted)', async () => {
    const book = new RateBook(identity, Date.now, 60_000);
    const limit = rpm(1);
    book.tryCharge(limit, 1);
    const controller = new AbortController();
    const waiting = book.acquire(limit, 1, 60_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' });
    expect(book.state(limit).queued).toBe(0);
  });

  it('a refund lets the head of the line in at once', async () => {
    const book = new RateBook(identity, Date.now, 60_000);
    const limit = rpm(1);
    const refund = book.tryCharge(limit, 1)!;
    const started = Date.now();
    const waiting = book.acquire(limit, 1, 60_000, undefined);
    refund();
    expect(await waiting).toBeDefined();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
