import { abortedError } from '../errors.js';
import type { CancelSignal, RateLimit } from '../types.js';
import type { CapacityShare } from './concurrency.js';

/** The span `rpm` / `tpm` count over: the last minute, sliding. */
export const RATE_WINDOW_MS = 60_000; // 60 s

/**
 * The longest a waiting head sleeps before it looks at the window again, even
 * when the room it needs is further away: the window is measured by the
 * injected clock, which need not move with the timers (a wall clock that
 * jumps, a test's clock).
 */
const PUMP_RECHECK_MS = 1_000; // 1 s

/** Gives a charge back (the request was never sent after all); later calls do nothing. */
export type Refund = () => void;

interface Entry {
  readonly at: number;
  cost: number;
}

interface Waiter {
  readonly cost: number;
  grant: (() => void) | undefined;
}

interface Bucket {
  /** Charges of the last minute, oldest first, from `head` on (a moving start instead of shift(): O(1) per expiry). */
  entries: Entry[];
  head: number;
  /** The sum of the live entries' costs. */
  used: number;
  /** Waiting requests, oldest first: room in the window goes to the head (FIFO), never to a newcomer. */
  readonly queue: Waiter[];
  /** Wakes the queue's head when enough of the window has expired for it. */
  timer: NodeJS.Timeout | undefined;
}

/** What a rate window holds now, for an attempt's `detail` and the views. */
export interface RateState {
  readonly used: number;
  readonly limit: number;
  readonly queued: number;
}

/**
 * The `rpm` / `tpm` windows, one per subject (a provider, or a target that names
 * its own limit), and the FIFO queue of requests waiting for room in each.
 *
 * A sliding log: each request admitted is charged at the time it is sent
 * (1 for rpm; its token estimate for tpm) and leaves the window a minute later,
 * so at most `limit` is charged in any 60 s span — the strictest reading of a
 * provider's per-minute quota, which a fixed-window or token-bucket upstream
 * therefore never refuses. Memory per window is bounded by its limit (every
 * charge is at least 1). A charge larger than the whole limit is capped at the
 * limit: it goes alone into an empty window rather than never.
 *
 * Owned by the router and shared by all requests; only targets that declare a
 * limit ever reach it, so a config without one pays nothing.
 */
export class RateBook {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly share: CapacityShare,
    private readonly now: () => number,
    /** The window's span: a minute, except in tests that watch charges leave it. */
    private readonly windowMs: number = RATE_WINDOW_MS,
  ) {}

  /** The effective local limit now (asked of the replicas hook on every check; at least 1). */
  limitOf(rate: RateLimit): number {
    const shared = this.share(rate.limit, { kind: rate.kind, name: rate.name, limit: rate.unit });
    return Math.max(1, Math.floor(Number.isFinite(shared) ? shared : rate.limit));
  }

  state(rate: RateLimit): RateState {
    const bucket = this.buckets.get(rate.key);
    if (bucket !== undefined) this.expire(bucket);
    return { used: bucket?.used ?? 0, limit: this.limitOf(rate), queued: bucket?.queue.length ?? 0 };
  }

  /** Whether a request of `cost` arriving now would be admitted at once (nobody queued ahead of it). */
  hasRoom(rate: RateLimit, cost: number): boolean {
    const bucket = this.buckets.get(rate.key);
    if (bucket === undefined) return true;
    this.expire(bucket);
    return bucket.queue.length === 0 && this.fits(bucket, cost, this.limitOf(rate));
  }

  /** Charged at once, or undefined when the window is full (or others wait ahead). */
  tryCharge(rate: RateLimit, cost: number): Refund | undefined {
    if (!this.hasRoom(rate, cost)) return undefined;
    return this.charge(rate, this.bucket(rate.key), cost);
  }

  /**
   * Waits in line for room in the window up to `timeoutMs`: resolves with the
   * charge's refund, or undefined when the time ran out. A signal that fires
   * leaves the line at once (rejects with `aborted`).
   */
  acquire(rate: RateLimit, cost: number, timeoutMs: number, signal: CancelSignal | undefined): Promise<Refund | undefined> {
    const now = this.tryCharge(rate, cost);
    if (now !== undefined || timeoutMs <= 0) return Promise.resolve(now);
    if (signal?.aborted === true) return Promise.reject(abortedError());
    const bucket = this.bucket(rate.key);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { cost, grant: undefined };
      const leave = (): number => {
        const i = bucket.queue.indexOf(waiter);
        if (i !== -1) bucket.queue.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        return i;
      };
      // A head that gives up may let the next one in now, or at another moment.
      const giveUp = (): void => {
        if (leave() === 0) this.pump(rate, bucket);
      };
      const onAbort = (): void => {
        giveUp();
        reject(abortedError());
      };
      // Called by pump() only (so after `timer` is set, below), which goes on with the next waiter itself.
      waiter.grant = () => {
        leave();
        resolve(this.charge(rate, bucket, cost));
      };
      const timer = setTimeout(() => {
        giveUp();
        resolve(undefined);
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      bucket.queue.push(waiter);
      if (bucket.queue.length === 1) this.pump(rate, bucket);
    });
  }

  private fits(bucket: Bucket, cost: number, limit: number): boolean {
    return bucket.used + Math.min(cost, limit) <= limit;
  }

  private charge(rate: RateLimit, bucket: Bucket, cost: number): Refund {
    const entry: Entry = { at: this.now(), cost: Math.min(cost, this.limitOf(rate)) };
    bucket.entries.push(entry);
    bucket.used += entry.cost;
    return () => {
      if (entry.cost === 0) return;
      bucket.used -= entry.cost;
      entry.cost = 0;
      this.pump(rate, bucket);
    };
  }

  /** Admits waiters from the head while they fit; else wakes up when enough of the window will have expired for the head. */
  private pump(rate: RateLimit, bucket: Bucket): void {
    clearTimeout(bucket.timer);
    bucket.timer = undefined;
    this.expire(bucket);
    const limit = this.limitOf(rate);
    while (bucket.queue.length > 0 && this.fits(bucket, bucket.queue[0]!.cost, limit)) bucket.queue[0]!.grant!();
    if (bucket.queue.length === 0) return;
    const at = this.roomAt(bucket, Math.min(bucket.queue[0]!.cost, limit), limit);
    bucket.timer = setTimeout(() => this.pump(rate, bucket), Math.min(PUMP_RECHECK_MS, Math.max(1, at - this.now())));
    // The waiters' own timers keep the process alive as long as anyone waits.
    bucket.timer.unref();
  }

  /** When the oldest charges will have left the window so that `cost` fits. */
  private roomAt(bucket: Bucket, cost: number, limit: number): number {
    let used = bucket.used;
    for (let i = bucket.head; i < bucket.entries.length; i++) {
      const entry = bucket.entries[i]!;
      used -= entry.cost;
      if (used + cost <= limit) return entry.at + this.windowMs;
    }
    return this.now(); // cannot happen: an empty window fits any capped cost
  }

  private expire(bucket: Bucket): void {
    const since = this.now() - this.windowMs;
    const entries = bucket.entries;
    let head = bucket.head;
    while (head < entries.length && entries[head]!.at <= since) bucket.used -= entries[head++]!.cost;
    if (head > 64 && head * 2 > entries.length) {
      bucket.entries = entries.slice(head);
      head = 0;
    }
    bucket.head = head;
  }

  private bucket(key: string): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = { entries: [], head: 0, used: 0, queue: [], timer: undefined };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }
}
