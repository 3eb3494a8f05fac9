import type { CancelListener, CancelSignal, RouterResult, TargetConfig } from '../types.js';
import type { AttemptLog } from './attempt-log.js';

/*
 * `hedge_after` ("The Tail at Scale": send a second request once the first has
 * been outstanding too long, keep the first answer, cancel the other). What an
 * LLM call adds: the race is decided by the first content delta of a stream
 * (the commit, see stream-commit.ts) or by a complete non-stream answer, and
 * the loser must be closed upstream at once, because it costs tokens.
 *
 * The two calls are two attempts of the request's one attempt loop
 * (execute.ts): it starts the hedge and waits for the first answer; the calls
 * decide the race themselves, at the moment one would commit (`claim`), so
 * that deciding and committing happen in one synchronous step and two answers
 * can never both reach the client.
 */

/** One side of a race: the attempt's own cancellation signal, following the request's, that the race can also fire. */
export class HedgeLeg implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  /** The race cancelled this leg (the other one answered first); not set when the request itself was aborted. */
  cancelled = false;
  /** The call in flight on this leg and when it started: recorded as the race's loser if the other leg wins meanwhile. */
  call: { readonly target: TargetConfig; readonly started: number } | undefined;
  private listeners: CancelListener[] = [];

  constructor(
    private readonly race: HedgeRace,
    private readonly caller: CancelSignal | undefined,
  ) {
    if (caller === undefined) return;
    if (caller.aborted) this.abort(caller.reason);
    // Never removed: the winner's committed stream still follows the request's signal through this leg,
    // and the leg lives no longer than the request that holds the signal.
    else caller.addEventListener('abort', this);
  }

  /** The request aborted: pass it on (EventListenerObject protocol). */
  handleEvent(): void {
    this.abort(this.caller?.reason);
  }

  addEventListener(_type: 'abort', listener: CancelListener): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: CancelListener): void {
    const i = this.listeners.indexOf(listener);
    if (i !== -1) this.listeners.splice(i, 1);
  }

  /**
   * This leg has an answer to commit: true when it is the first (the other
   * leg's call, if one is in flight, is recorded `cancelled` / `hedge_lost`
   * and closed), false when the other leg won already (this one must drop its
   * answer without recording anything more than the race did).
   */
  claim(): boolean {
    return this.race.claim(this);
  }

  /** @internal the other leg won. */
  cancel(): void {
    if (this.aborted) return;
    this.cancelled = true;
    this.abort(new HedgeLostError());
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    const event = new Event('abort');
    for (const listener of listeners) {
      if (typeof listener === 'function') listener(event);
      else listener.handleEvent(event);
    }
  }
}

/** The two legs of one request's race and who won it; created only when `hedge_after` is in force for an attempt. */
export class HedgeRace {
  readonly primary: HedgeLeg;
  private hedgeLeg: HedgeLeg | undefined;
  private winner: HedgeLeg | undefined;

  constructor(
    private readonly log: AttemptLog,
    private readonly now: () => number,
    private readonly signal: CancelSignal | undefined,
  ) {
    this.primary = new HedgeLeg(this, signal);
    log.hedge ??= 'not_needed';
  }

  /** Whether a leg has claimed the answer. */
  get decided(): boolean {
    return this.winner !== undefined;
  }

  /** No other target can be called at once: no hedge is started (the request waits on its first attempt). */
  unavailable(): void {
    this.log.hedge = 'unavailable';
  }

  /** The second leg starts; until one of the two answers the request counts as `failed` (neither answered). */
  startHedge(): HedgeLeg {
    this.hedgeLeg = new HedgeLeg(this, this.signal);
    this.log.hedge = 'failed';
    return this.hedgeLeg;
  }

  /** @internal see HedgeLeg.claim. */
  claim(leg: HedgeLeg): boolean {
    if (this.winner !== undefined) return this.winner === leg;
    this.winner = leg;
    const other = leg === this.primary ? this.hedgeLeg : this.primary;
    if (other === undefined) return true;
    this.log.hedge = leg === this.primary ? 'lost' : 'won';
    const call = other.call;
    // Recorded now, before the winner's own attempt: the answering attempt stays the last one.
    if (call !== undefined) {
      const by = leg.call === undefined ? 'the other call' : leg.call.target.id;
      this.log.add(call.target, 'cancelled', 'hedge_lost', this.now() - call.started, { detail: `${by} answered first` });
    }
    other.cancel();
    return true;
  }
}

/** The abort reason of a race's losing call. */
class HedgeLostError extends Error {
  override readonly name = 'HedgeLostError';
  readonly code = 'hedge_lost';

  constructor() {
    super('the other call of a hedge_after race answered first');
  }
}

/**
 * The first of two attempts to answer (undefined when both end without one).
 * A rejection (the request aborted) rejects; the other's is then ignored.
 */
export function firstAnswer(a: Promise<RouterResult | undefined>, b: Promise<RouterResult | undefined>): Promise<RouterResult | undefined> {
  return new Promise((resolve, reject) => {
    let pending = 2;
    const settle = (result: RouterResult | undefined): void => {
      if (result !== undefined) resolve(result);
      else if (--pending === 0) resolve(undefined);
    };
    a.then(settle, reject);
    b.then(settle, reject);
  });
}

/** Resolves `'timer'` after `ms` unless `work` settles first (then with its value); the timer is always cleared. */
export async function settledWithin<T>(work: Promise<T>, ms: number): Promise<{ readonly settled: true; readonly value: T } | { readonly settled: false }> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<{ readonly settled: false }>((resolve) => {
    timer = setTimeout(resolve, ms, { settled: false });
  });
  try {
    return await Promise.race([work.then((value) => ({ settled: true as const, value })), elapsed]);
  } finally {
    clearTimeout(timer);
  }
}
