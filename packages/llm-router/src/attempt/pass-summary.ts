import type { HealthCheck } from '../health/health-cache.js';
import type { Decision } from './classify-error.js';

/**
 * What one walk over an alias's plan saw, as data: the attempt loop
 * (execute.ts) walks, a PassTally counts as it goes, and next-step.ts decides
 * from the summaries what to do when no target answered.
 */

/**
 * How a walk over the plan was made: the first one, or after which step
 * (`for_room`: back to the targets passed by only because they were full,
 * now waiting for their room).
 */
export type PassKind = 'first' | 'ignoring_health' | 'after_wait' | 'for_room';

/** What one walk over the plan saw when no target answered. */
export interface PassSummary {
  readonly kind: PassKind;
  /** Attempts logged on this pass (every target, every retry, skips included). */
  readonly attempts: number;
  /** Of those, calls that reached the network and failed. */
  readonly failed: number;
  /** Skips because the target cannot take the request at all (`unsupported_request`, `unsupported_parameter`). */
  readonly refusals: number;
  /** Targets too small for the prompt: estimated (`context_too_small`) or said so by the upstream (`context_length`). */
  readonly contextMisses: number;
  /** The first request parameter a target could not honour (for `unsupported_parameter`). */
  readonly unsupportedParam: string | undefined;
  /** A target was skipped for a health block that passes (any but `unconfigured`): `try_anyway` may override it. */
  readonly skippedForHealth: boolean;
  /** A target was skipped while cooling down (after a 429 or 5xx, …): a background request may wait that out. */
  readonly coolingDown: boolean;
  /** The soonest time (epoch ms) a target skipped for health becomes usable again; undefined: none does by waiting. */
  readonly soonestRecovery: number | undefined;
  /** A healthy target was passed by only because it was full (`saturated` / `rate_limited`): waiting for it may still answer. */
  readonly passedFull: boolean;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Builds one pass's summary as the walk goes: one call per attempt that did not answer. */
export class PassTally {
  private readonly summary: Mutable<PassSummary>;

  constructor(kind: PassKind) {
    this.summary = {
      kind,
      attempts: 0,
      failed: 0,
      refusals: 0,
      contextMisses: 0,
      unsupportedParam: undefined,
      skippedForHealth: false,
      coolingDown: false,
      soonestRecovery: undefined,
      passedFull: false,
    };
  }

  /** Skipped: the prompt is estimated not to fit (`context_too_small`). */
  tooSmall(): void {
    this.summary.attempts++;
    this.summary.contextMisses++;
  }

  /** Skipped: the target's protocol cannot honour `param` (`unsupported_parameter`). */
  cannotHonour(param: string): void {
    this.summary.attempts++;
    this.summary.refusals++;
    this.summary.unsupportedParam ??= param;
  }

  /** Skipped by the health pre-check; `transient`: a block that passes (not `unconfigured`). */
  blocked(check: Extract<HealthCheck, { ok: false }>, transient: boolean): void {
    const s = this.summary;
    s.attempts++;
    if (check.until !== undefined && (s.soonestRecovery === undefined || check.until < s.soonestRecovery)) s.soonestRecovery = check.until;
    if (check.kind === 'cooling_down') s.coolingDown = true;
    if (transient) s.skippedForHealth = true;
  }

  /** Skipped: full (`max_concurrency` slots taken, or a rate window used up) when the request could not wait. */
  full(): void {
    this.summary.attempts++;
    this.summary.passedFull = true;
  }

  /** Skipped: no provider or adapter to call it with. */
  unusable(): void {
    this.summary.attempts++;
  }

  /** A call that did not answer, as classify-error.ts decided it. */
  callFailed(d: Decision): void {
    const s = this.summary;
    s.attempts++;
    // A decision that never reached the network is the adapter refusing the request (`unsupported_request`).
    if (d.reachedNetwork) s.failed++;
    else s.refusals++;
    if (d.reason === 'context_length') s.contextMisses++;
  }

  done(): PassSummary {
    return { ...this.summary };
  }
}
