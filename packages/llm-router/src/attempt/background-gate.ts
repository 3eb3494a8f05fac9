import { abortedError } from '../errors.js';
import type { CancelSignal } from '../types.js';

/**
 * Concurrency limit for `background` requests, so batch jobs cannot crowd out
 * interactive ones; `realtime` requests never pass through here. The limit is
 * read per acquire, so a reload that changes it applies to the next request.
 */
export class BackgroundGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  /** Resolves with a release function once a slot is free; rejects with `aborted` if the signal fires first. */
  acquire(limit: number, signal: CancelSignal | undefined): Promise<() => void> {
    if (signal?.aborted === true) return Promise.reject(abortedError());
    if (this.active < Math.max(1, limit)) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.active++;
        resolve(this.releaser());
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(grant);
        if (i !== -1) this.waiting.splice(i, 1);
        reject(abortedError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  get inUse(): number {
    return this.active;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.waiting.shift()?.();
    };
  }
}

/** In-flight requests per target id, for the `least_busy` strategy. */
export class InFlight {
  private readonly counts = new Map<string, number>();
  /** Bound so it can be handed to the planner as is. */
  readonly get = (targetId: string): number => this.counts.get(targetId) ?? 0;

  inc(targetId: string): void {
    this.counts.set(targetId, this.get(targetId) + 1);
  }

  dec(targetId: string): void {
    const n = this.get(targetId) - 1;
    if (n <= 0) this.counts.delete(targetId);
    else this.counts.set(targetId, n);
  }
}

/** A timer-based wait that an abort cuts short (with `aborted`); the timer is always cleared. */
export function sleep(ms: number, signal: CancelSignal | undefined): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(abortedError());
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
