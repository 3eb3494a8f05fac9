import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { BackgroundGate, sleep } from './attempt/background-gate.js';
import { FirstByteTimer } from './attempt/first-byte-timer.js';
import type { CancelListener, CancelSignal, RouterRequest } from './index.js';

/** The smallest object that satisfies the contract: no EventTarget, no AbortController. */
class LeanSignal implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: CancelListener[] = [];

  addEventListener(_type: 'abort', listener: CancelListener): void {
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: CancelListener): void {
    this.listeners = this.listeners.filter((l) => l !== listener);
  }

  abort(reason: unknown): void {
    this.aborted = true;
    this.reason = reason;
    const event = { type: 'abort' } as Event;
    for (const l of this.listeners.splice(0)) {
      if (typeof l === 'function') l(event);
      else l.handleEvent(event);
    }
  }

  get listenerCount(): number {
    return this.listeners.length;
  }
}

describe('CancelSignal', () => {
  it('is satisfied by a standard AbortSignal (type level)', () => {
    expectTypeOf<AbortSignal>().toMatchTypeOf<CancelSignal>();
    // Also checked by tsc (`pnpm typecheck`): an AbortController's signal goes in as is.
    const signal: CancelSignal = new AbortController().signal;
    const request: RouterRequest = { model: undefined, body: { messages: [] }, stream: false, signal: AbortSignal.abort() };
    expect(signal.aborted).toBe(false);
    expect(request.signal?.aborted).toBe(true);
  });

  it('is all the first-byte timer needs from the caller: it follows and then unhooks', () => {
    const caller = new LeanSignal();
    const timer = new FirstByteTimer(caller, 0);
    const onAbort = vi.fn();
    timer.once('abort', onAbort);
    expect(caller.listenerCount).toBe(1);
    const reason = new Error('client went away');
    caller.abort(reason);
    expect(onAbort).toHaveBeenCalledTimes(1);
    expect(timer.aborted).toBe(true);
    expect(timer.reason).toBe(reason);

    const other = new LeanSignal();
    new FirstByteTimer(other, 0).dispose();
    expect(other.listenerCount).toBe(0);
  });

  it('aborts a background wait and a retry sleep', async () => {
    const gate = new BackgroundGate();
    const release = await gate.acquire(1, undefined);
    const caller = new LeanSignal();
    const waiting = gate.acquire(1, caller);
    const sleeping = sleep(60_000, caller);
    caller.abort(new Error('gone'));
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' });
    await expect(sleeping).rejects.toMatchObject({ code: 'aborted' });
    release();
    expect(gate.inUse).toBe(0);
  });
});
