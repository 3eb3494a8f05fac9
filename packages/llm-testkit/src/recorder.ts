import type { RecordedRequest } from './types.js';

const DEFAULT_WAIT_MS = 5_000; // 5 s: long enough for a loaded 2-core CI box, short enough to fail fast

interface Waiter {
  readonly match: (r: RecordedRequest) => boolean;
  readonly resolve: (r: RecordedRequest) => void;
  readonly reject: (e: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * A queue of events (requests received / clients gone) with "hand out each event once"
 * semantics, so `await Promise.all([fetch(...), fake.waitForRequest()])` works regardless of
 * which side wins the race, and two successive waits return two different requests.
 */
class EventQueue {
  #pending: RecordedRequest[] = [];
  #waiters = new Set<Waiter>();
  constructor(private readonly what: string) {}

  /** `keep` false: an event nobody waits for is dropped (keeps memory flat when not recording). */
  push(r: RecordedRequest, keep = true): void {
    for (const w of this.#waiters) {
      if (w.match(r)) {
        this.#waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve(r);
        return;
      }
    }
    if (keep) this.#pending.push(r);
  }

  wait(match: (r: RecordedRequest) => boolean, timeoutMs: number): Promise<RecordedRequest> {
    const i = this.#pending.findIndex(match);
    if (i >= 0) return Promise.resolve(this.#pending.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        match,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new Error(`fake upstream: no ${this.what} within ${timeoutMs} ms`));
        }, timeoutMs),
      };
      this.#waiters.add(waiter);
    });
  }

  clear(): void {
    this.#pending = [];
  }

  rejectAll(reason: string): void {
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`fake upstream: ${reason} while waiting for ${this.what}`));
    }
    this.#waiters.clear();
  }
}

const always = (): boolean => true;

/** What the fake saw: requests, probes, per-model counts, client disconnects. */
export class Recorder {
  readonly requests: RecordedRequest[] = [];
  readonly probes: RecordedRequest[] = [];
  #total = 0;
  #byModel = new Map<string, number>();
  #probeCount = 0;
  readonly #received = new EventQueue('request');
  readonly #closed = new EventQueue('client close');

  constructor(private readonly keep: boolean) {}

  request(r: RecordedRequest): void {
    this.#total++;
    if (r.model !== undefined) this.#byModel.set(r.model, (this.#byModel.get(r.model) ?? 0) + 1);
    if (this.keep) this.requests.push(r);
    this.#received.push(r, this.keep);
  }

  probe(r: RecordedRequest): void {
    this.#probeCount++;
    if (this.keep) this.probes.push(r);
  }

  clientClosed(r: RecordedRequest): void {
    r.closedByClient = true;
    r.closedAt = Date.now();
    this.#closed.push(r);
  }

  count(model?: string): number {
    return model === undefined ? this.#total : (this.#byModel.get(model) ?? 0);
  }

  probeCount(): number {
    return this.#probeCount;
  }

  waitForRequest(predicate: (r: RecordedRequest) => boolean = always, timeoutMs = DEFAULT_WAIT_MS): Promise<RecordedRequest> {
    return this.#received.wait(predicate, timeoutMs);
  }

  waitForClientClose(timeoutMs = DEFAULT_WAIT_MS, predicate: (r: RecordedRequest) => boolean = always): Promise<RecordedRequest> {
    return this.#closed.wait(predicate, timeoutMs);
  }

  reset(): void {
    this.requests.length = 0;
    this.probes.length = 0;
    this.#total = 0;
    this.#byModel.clear();
    this.#probeCount = 0;
    this.#received.clear();
    this.#closed.clear();
  }

  close(): void {
    this.#received.rejectAll('fake closed');
    this.#closed.rejectAll('fake closed');
    this.#received.clear();
    this.#closed.clear();
  }
}
