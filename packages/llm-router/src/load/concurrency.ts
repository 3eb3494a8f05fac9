import { abortedError } from '../errors.js';
import type { CancelSignal, ConcurrencyLimit } from '../types.js';

/** The replicas hook (RouterOptions.capacityShare): a configured total → this process's effective limit. */
export type CapacityShare = (
  total: number,
  subject: { readonly kind: 'provider' | 'target'; readonly name: string; readonly limit: 'max_concurrency' | 'rpm' | 'tpm' },
) => number;

interface Waiter {
  grant: (() => void) | undefined;
  timer: NodeJS.Timeout | undefined;
  finish: (release: (() => void) | undefined) => void;
}

interface Bucket {
  inFlight: number;
  /** Waiting requests, oldest first: a freed slot goes to the head (FIFO), never to a newcomer. */
  readonly queue: Waiter[];
}

/** What a full target is doing, for an attempt's `detail` and the views. */
export interface ConcurrencyState {
  readonly inFlight: number;
  readonly limit: number;
  readonly queued: number;
}

/**
 * Requests in flight per `max_concurrency` subject (a provider, or a target that
 * names its own limit), and the FIFO queue of those waiting for a slot. Owned by
 * the router and shared by all requests; only targets that declare a limit ever
 * reach it, so a config without one pays nothing.
 */
export class ConcurrencyBook {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly share: CapacityShare) {}

  /** The effective local limit now (asked of the replicas hook on every check; at least 1). */
  limitOf(limit: ConcurrencyLimit): number {
    const shared = this.share(limit.limit, { kind: limit.kind, name: limit.name, limit: 'max_concurrency' });
    return Math.max(1, Math.floor(Number.isFinite(shared) ? shared : limit.limit));
  }

  state(limit: ConcurrencyLimit): ConcurrencyState {
    const bucket = this.buckets.get(limit.key);
    return { inFlight: bucket?.inFlight ?? 0, limit: this.limitOf(limit), queued: bucket?.queue.length ?? 0 };
  }

  /** Whether a request arriving now would get a slot at once (nobody queued ahead of it). */
  hasRoom(limit: ConcurrencyLimit): boolean {
    const bucket = this.buckets.get(limit.key);
    return bucket === undefined || (bucket.queue.length === 0 && bucket.inFlight < this.limitOf(limit));
  }

  /** A slot at once, or undefined when the subject is full (or others wait ahead). */
  tryAcquire(limit: ConcurrencyLimit): (() => void) | undefined {
    if (!this.hasRoom(limit)) return undefined;
    const bucket = this.bucket(limit.key);
    bucket.inFlight++;
    return this.releaser(limit, bucket);
  }

  /**
   * Waits in line for a slot up to `timeoutMs`: resolves with its release, or
   * undefined when the time ran out. A signal that fires leaves the line at once
   * (rejects with `aborted`).
   */
  acquire(limit: ConcurrencyLimit, timeoutMs: number, signal: CancelSignal | undefined): Promise<(() => void) | undefined> {
    const now = this.tryAcquire(limit);
    if (now !== undefined || timeoutMs <= 0) return Promise.resolve(now);
    if (signal?.aborted === true) return Promise.reject(abortedError());
    const bucket = this.bucket(limit.key);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { grant: undefined, timer: undefined, finish: () => undefined };
      const leave = (): void => {
        const i = bucket.queue.indexOf(waiter);
        if (i !== -1) bucket.queue.splice(i, 1);
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        leave();
        reject(abortedError());
      };
      waiter.grant = () => {
        leave();
        bucket.inFlight++;
        resolve(this.releaser(limit, bucket));
      };
      waiter.timer = setTimeout(() => {
        leave();
        resolve(undefined);
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      bucket.queue.push(waiter);
    });
  }

  private bucket(key: string): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { inFlight: 0, queue: [] };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  private releaser(limit: ConcurrencyLimit, bucket: Bucket): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      bucket.inFlight--;
      // Hand freed slots to the oldest waiters (a lowered share may leave none to hand out).
      while (bucket.queue.length > 0 && bucket.inFlight < this.limitOf(limit)) bucket.queue[0]!.grant!();
    };
  }
}
