import type { Attempt, AttemptEvent, AttemptOutcome, TargetConfig } from '../types.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The attempts of one request, in order. An attempt's `failedOver` flag and
 * event's `nextTarget` are only known once the loop moves on, so each attempt
 * is published (event emitted) when the next one starts or the request ends.
 */
export class AttemptLog {
  readonly attempts: Attempt[] = [];
  /** Attempts that reached the network. */
  upstreamCalls = 0;
  private pending: Mutable<Attempt> | undefined;

  constructor(
    private readonly alias: string | undefined,
    private readonly requestId: string | undefined,
    private readonly emit: ((event: AttemptEvent) => void) | undefined,
  ) {}

  add(
    target: TargetConfig,
    outcome: AttemptOutcome,
    reason: string,
    durationMs: number,
    extra?: { status?: number | undefined; detail?: string | undefined },
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
    this.attempts.push(attempt);
    this.pending = attempt;
  }

  /** The request is over: publish the last attempt (it did not fail over). */
  close(): readonly Attempt[] {
    this.publish(undefined);
    return this.attempts;
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
