import type { Attempt, AttemptEvent, AttemptOutcome, RequestOutcome, TargetConfig, Usage } from '../types.js';
import type { AttemptReason } from './attempt-reasons.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** `Retry-After` bounds: at least 1 s (0 would invite a busy loop), at most 1 h (beyond, a client should look again anyway). */
const MIN_RETRY_AFTER_S = 1;
const MAX_RETRY_AFTER_S = 3_600; // 1 h

/**
 * The attempts of one request, in order, and the one place that turns them
 * into the request's outcome. An attempt's `failedOver` flag and event's
 * `nextTarget` are only known once the loop moves on, so each attempt is
 * published (event emitted) when the next one starts or the request ends.
 */
export class AttemptLog {
  readonly attempts: Attempt[] = [];
  private pending: Mutable<Attempt> | undefined;

  constructor(
    readonly alias: string | undefined,
    private readonly requestId: string | undefined,
    private readonly emit: ((event: AttemptEvent) => void) | undefined,
  ) {}

  add(
    target: TargetConfig,
    outcome: AttemptOutcome,
    reason: AttemptReason,
    durationMs: number,
    extra?: { status?: number | undefined; detail?: string | undefined; usage?: Usage | undefined },
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
    return { alias: this.alias, target, attempts: this.attempts, upstreamCalls, retryAfterSeconds };
  }

  private publish(nextTarget: string | undefined): void {
    const attempt = this.pending;
    if (attempt === undefined) return;
    this.pending = undefined;
    // A retry of the same target is not a failover.
    if (nextTarget !== undefined && nextTarget !== attempt.target) attempt.failedOver = true;
    this.emit?.({ requestId: this.requestId, alias: this.alias, attempt, nextTarget });
  }
}
