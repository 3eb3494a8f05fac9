import type {
  AnswerFacts,
  Attempt,
  AttemptEvent,
  AttemptObserver,
  AttemptOutcome,
  CallObserver,
  HedgeOutcome,
  ProviderConfig,
  RequestOutcome,
  TargetConfig,
  Usage,
} from '../types.js';
import type { AttemptReason } from './attempt-reasons.js';
import { upstreamCall } from './upstream-call.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** `Retry-After` bounds: at least 1 s (0 would invite a busy loop), at most 1 h (beyond, a client should look again anyway). */
const MIN_RETRY_AFTER_S = 1;
const MAX_RETRY_AFTER_S = 3_600; // 1 h

/**
 * The attempts of one request, in order, and the one place that turns them
 * into the request's outcome. An attempt's `failedOver` flag and event's
 * `nextTarget` are only known once the loop moves on, so each attempt is
 * published (event emitted) when the next one starts or the request ends.
 *
 * The request's observer, when it has one (AttemptObserver), hears of the same
 * attempts from here as they are added and published: an attempt of a target
 * with a call started (`callStarted`) and not yet recorded is that call's, any
 * other is a skip. Two calls may be open at once (a `hedge_after` race); they
 * are always to two different targets.
 */
export class AttemptLog {
  readonly attempts: Attempt[] = [];
  /** How `hedge_after` went so far (hedge-race.ts writes it); goes into every outcome made from now on. */
  hedge: HedgeOutcome | undefined;
  private pending: Mutable<Attempt> | undefined;
  /** The calls started and not yet recorded (by target), then (recorded) the one whose attempt is pending. */
  private openCalls: Array<{ readonly target: string; readonly call: CallObserver }> | undefined;
  private pendingCall: CallObserver | undefined;

  constructor(
    readonly alias: string | undefined,
    private readonly requestId: string | undefined,
    private readonly emit: ((event: AttemptEvent) => void) | undefined,
    private readonly observer?: AttemptObserver | undefined,
  ) {}

  /** An upstream call to `target` starts: its observer, or undefined when the request has none. */
  callStarted(target: TargetConfig, provider: ProviderConfig): CallObserver | undefined {
    const observer = this.observer;
    if (observer === undefined) return undefined;
    let call: CallObserver;
    try {
      call = observer.callStarted(upstreamCall(target, provider));
    } catch {
      call = UNOBSERVED_CALL; // an observer must never break routing; the call's attempt is still no skip
    }
    (this.openCalls ??= []).push({ target: target.id, call });
    return call;
  }

  add(
    target: TargetConfig,
    outcome: AttemptOutcome,
    reason: AttemptReason,
    durationMs: number,
    extra?: { status?: number | undefined; detail?: string | undefined; usage?: Usage | undefined; answer?: AnswerFacts | undefined },
  ): void {
    this.publish(target.id);
    const attempt: Mutable<Attempt> = {
      target: target.id,
      provider: target.provider,
      model: target.model,
      outcome,
      reason,
      durationMs,
      failedOver: false,
    };
    if (extra?.status !== undefined) attempt.status = extra.status;
    if (extra?.detail !== undefined) attempt.detail = extra.detail;
    if (extra?.usage !== undefined) attempt.usage = extra.usage;
    if (target.price !== undefined && outcome !== 'skipped') attempt.price = target.price;
    this.attempts.push(attempt);
    this.pending = attempt;
    if (this.observer !== undefined) this.observe(attempt, extra?.answer);
  }

  /** Gives the last attempt of `target` the tokens its upstream reported after it was recorded (a hedge loser's late answer). */
  addUsage(target: string, usage: Usage): void {
    const attempt: Mutable<Attempt> | undefined = this.attempts.findLast((a) => a.target === target);
    if (attempt !== undefined && attempt.usage === undefined) attempt.usage = usage;
  }

  /** Adds `text` to the detail of the last attempt of `target` (what its committed stream met after the commit). */
  note(target: string, text: string): void {
    const attempt: Mutable<Attempt> | undefined = this.attempts.findLast((a) => a.target === target);
    if (attempt === undefined) return;
    attempt.detail = attempt.detail === undefined ? text : `${attempt.detail}; ${text}`;
  }

  /**
   * The request is over: publish the last attempt (it did not fail over) and
   * describe what happened. `retryAt` (epoch ms) becomes the clamped
   * `retryAfterSeconds` from `now`.
   */
  outcome<T extends string | undefined>(target: T, retry?: { at: number | undefined; now: number }): RequestOutcome & { target: T } {
    this.publish(undefined);
    let upstreamCalls = 0;
    for (const a of this.attempts) if (a.outcome !== 'skipped') upstreamCalls++;
    let retryAfterSeconds: number | undefined;
    if (retry !== undefined) {
      const seconds = retry.at === undefined ? MIN_RETRY_AFTER_S : Math.ceil((retry.at - retry.now) / 1000);
      retryAfterSeconds = Math.min(MAX_RETRY_AFTER_S, Math.max(MIN_RETRY_AFTER_S, Number.isFinite(seconds) ? seconds : MAX_RETRY_AFTER_S));
    }
    const outcome = { alias: this.alias, target, attempts: this.attempts, upstreamCalls, retryAfterSeconds };
    return this.hedge === undefined ? outcome : { ...outcome, hedge: this.hedge };
  }

  private publish(nextTarget: string | undefined): void {
    const attempt = this.pending;
    if (attempt === undefined) return;
    this.pending = undefined;
    // A retry of the same target is not a failover, nor is a call the router cancelled itself (a hedge's loser).
    if (nextTarget !== undefined && nextTarget !== attempt.target && attempt.outcome !== 'cancelled') attempt.failedOver = true;
    const call = this.pendingCall;
    if (call !== undefined) {
      this.pendingCall = undefined;
      guarded(() => call.published(attempt));
    }
    this.emit?.({ requestId: this.requestId, alias: this.alias, attempt, nextTarget });
  }

  /** The attempt just added, to the observer: the end of its target's open call, or a skip. */
  private observe(attempt: Attempt, answer: AnswerFacts | undefined): void {
    const open = this.openCalls;
    const i = open === undefined ? -1 : open.findIndex((o) => o.target === attempt.target);
    if (i === -1) {
      const observer = this.observer!;
      guarded(() => observer.skipped(attempt));
      return;
    }
    const call = open![i]!.call;
    open!.splice(i, 1);
    this.pendingCall = call;
    guarded(() => call.ended(attempt, answer));
  }
}

/** The call of an observer whose `callStarted` threw: nothing to tell it. */
const UNOBSERVED_CALL: CallObserver = { headers: undefined, ended() {}, published() {}, streamEnded() {} };

/** An observer must never break routing (as an attempt-event listener must not). */
function guarded(notify: () => void): void {
  try {
    notify();
  } catch {
    // noted nowhere: the request goes on
  }
}
