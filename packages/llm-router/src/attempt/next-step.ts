import type { OnAllUnhealthy } from '../types.js';
import type { PassKind, PassSummary } from './pass-summary.js';

/**
 * What the attempt loop does after a walk over the plan found no answer: walk
 * it once more ignoring health, wait, or fail with a code. A pure function of
 * what the walks saw (pass-summary.ts), so every way out of the loop is
 * decided in one place and tested without sockets; execute.ts only carries
 * the step out.
 */

/** What a request allows beyond the first walk. */
export interface StepPolicy {
  readonly onAllUnhealthy: OnAllUnhealthy;
  /** Only a background request may wait; a realtime one never does. */
  readonly background: boolean;
  /** The longest wait for a cooldown to end: the plan's largest `retry_max_wait`. */
  readonly maxWaitMs: number;
  readonly now: number;
}

export type Step =
  | { readonly kind: 'retry_ignoring_health' }
  /** Walk back to the targets passed by because they were full, and wait for their room this time. */
  | { readonly kind: 'wait_for_room' }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'fail'; readonly code: 'context_length_exceeded' | 'upstream_failed' | 'unsupported_request' }
  | { readonly kind: 'fail'; readonly code: 'unsupported_parameter'; readonly param: string }
  /** `recoveryAt`: the soonest a skipped target becomes usable again, for the caller's Retry-After. */
  | { readonly kind: 'fail'; readonly code: 'no_healthy_provider'; readonly recoveryAt: number | undefined };

/**
 * The next step after the passes so far (oldest first, at least one). The
 * error describes every attempt of the request, so its checks count the
 * attempts of all passes; health skips are those of the last pass. Each
 * extra pass is taken at most once, so a request walks its plan at most
 * four times.
 */
export function nextStep(passes: readonly PassSummary[], policy: StepPolicy): Step {
  const last = passes[passes.length - 1]!;
  let attempts = 0;
  let failed = 0;
  let refusals = 0;
  let contextMisses = 0;
  let unsupportedParam: string | undefined;
  for (const pass of passes) {
    attempts += pass.attempts;
    failed += pass.failed;
    refusals += pass.refusals;
    contextMisses += pass.contextMisses;
    unsupportedParam ??= pass.unsupportedParam;
  }
  // The request must change, whatever waiting or retrying would do: checked first.
  if (attempts > 0 && contextMisses === attempts) return { kind: 'fail', code: 'context_length_exceeded' };
  const walked = (kind: PassKind): boolean => passes.some((pass) => pass.kind === kind);
  // A full target was passed by for one that then failed or refused: a busy box alone never fails a request.
  if (passes.some((pass) => pass.passedFull) && !walked('for_room')) return { kind: 'wait_for_room' };
  if (failed > 0) return { kind: 'fail', code: 'upstream_failed' };
  if (attempts > 0 && refusals === attempts) {
    return unsupportedParam === undefined
      ? { kind: 'fail', code: 'unsupported_request' }
      : { kind: 'fail', code: 'unsupported_parameter', param: unsupportedParam };
  }
  if (last.skippedForHealth && policy.onAllUnhealthy === 'try_anyway' && !walked('ignoring_health')) return { kind: 'retry_ignoring_health' };
  const recoveryAt = last.soonestRecovery;
  if (
    policy.background &&
    last.coolingDown &&
    recoveryAt !== undefined &&
    recoveryAt - policy.now <= policy.maxWaitMs &&
    !walked('after_wait')
  ) {
    return { kind: 'wait', ms: Math.max(0, recoveryAt - policy.now) };
  }
  return { kind: 'fail', code: 'no_healthy_provider', recoveryAt };
}
