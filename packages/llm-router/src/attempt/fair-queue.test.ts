import { describe, expect, it } from 'vitest';
import { FairQueue } from './fair-queue.js';

const anyone = (): boolean => true;

function takeAll(queue: FairQueue<string>, eligible: (caller: string) => boolean = anyone): string[] {
  const taken: string[] = [];
  for (let next = queue.take(eligible); next !== undefined; next = queue.take(eligible)) taken.push(next.item);
  return taken;
}

describe('fair queue', () => {
  it('takes callers in turn, each in its own arrival order: a backlog waits behind itself', () => {
    const queue = new FairQueue<string>({ perCaller: 10, total: 100 });
    for (let i = 1; i <= 5; i++) queue.push('a', `a${i}`);
    queue.push('b', 'b1');
    queue.push('c', 'c1');
    queue.push('b', 'b2');
    expect(takeAll(queue)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4', 'a5']);
    expect(queue.length).toBe(0);
  });

  it('a caller that arrives behind a backlog is served after one item of each caller ahead of it', () => {
    const queue = new FairQueue<string>({ perCaller: 10, total: 100 });
    for (let i = 1; i <= 6; i++) queue.push('a', `a${i}`);
    expect(queue.take(anyone)?.item).toBe('a1');
    queue.push('b', 'b1');
    expect([queue.take(anyone)?.item, queue.take(anyone)?.item]).toEqual(['a2', 'b1']);
  });

  it('a caller the take skips keeps its place and is served first once allowed', () => {
    const queue = new FairQueue<string>({ perCaller: 10, total: 100 });
    queue.push('a', 'a1');
    queue.push('a', 'a2');
    queue.push('b', 'b1');
    queue.push('b', 'b2');
    expect(queue.take((caller) => caller !== 'a')?.item).toBe('b1');
    expect(takeAll(queue)).toEqual(['a1', 'b2', 'a2']);
  });

  it('refuses past the bound of a caller or of everyone, unless forced (which still counts)', () => {
    const queue = new FairQueue<string>({ perCaller: 2, total: 3 });
    expect(queue.push('a', 'a1')).toBeUndefined();
    expect(queue.push('a', 'a2')).toBeUndefined();
    expect(queue.push('a', 'a3')).toBe('caller');
    expect(queue.push('b', 'b1')).toBeUndefined();
    expect(queue.push('c', 'c1')).toBe('total');
    expect(queue.push('c', 'c1', true)).toBeUndefined();
    expect(queue.length).toBe(4);
    expect(queue.push('d', 'd1')).toBe('total');
    expect(takeAll(queue)).toEqual(['a1', 'b1', 'c1', 'a2']);
  });

  it('removes a waiting item (its caller leaves the ring when it was its last) and drains the rest', () => {
    const queue = new FairQueue<string>({ perCaller: 5, total: 10 });
    queue.push('a', 'a1');
    queue.push('b', 'b1');
    queue.push('a', 'a2');
    expect(queue.remove('b', 'b1')).toBe(true);
    expect(queue.remove('b', 'b1')).toBe(false);
    expect(queue.length).toBe(2);
    expect(queue.drain()).toEqual(['a1', 'a2']);
    expect(queue.take(anyone)).toBeUndefined();
  });
});
