import type { ContextFit } from '../context/context-fit.js';
import { RouterError } from '../errors.js';
import type { Attempt } from '../types.js';
import type { AttemptLog } from './attempt-log.js';
import type { Step } from './next-step.js';

export type FailStep = Extract<Step, { kind: 'fail' }>;

/** What the error of a request that got no answer is written from. */
export interface FinalErrorContext {
  /** The alias (or direct target) name, as errors show it. */
  readonly name: string;
  readonly log: AttemptLog;
  /** Chat only: the prompt estimate quoted by `context_length_exceeded`. */
  readonly fit: ContextFit | undefined;
  /** The time `recoveryAt` is counted from (the one the step was decided at). */
  readonly now: number;
}

/** The RouterError for a `fail` step: its code, a message naming every attempt, and the request's outcome. */
export function finalError(step: FailStep, c: FinalErrorContext): RouterError {
  switch (step.code) {
    case 'context_length_exceeded': {
      const outcome = c.log.outcome(undefined);
      const estimate = c.fit === undefined ? '' : ` (~${c.fit.promptTokens()} prompt tokens estimated, plus the answer's budget)`;
      return new RouterError(
        'context_length_exceeded',
        `no target of ${c.name} has a context window for this request${estimate}: ` +
          outcome.attempts.map((a) => `${a.target}: ${a.detail ?? a.reason}`).join('; '),
        { outcome, param: 'messages' },
      );
    }
    case 'upstream_failed': {
      const outcome = c.log.outcome(undefined);
      return new RouterError('upstream_failed', `every target of ${c.name} failed: ${summarize(outcome.attempts)}`, { outcome });
    }
    // Every target refused the request before any call: waiting or retrying cannot help, the request must change.
    case 'unsupported_parameter': {
      const outcome = c.log.outcome(undefined);
      return new RouterError('unsupported_parameter', `no target of ${c.name} can honour \`${step.param}\`: ${summarize(outcome.attempts)}`, {
        outcome,
        param: step.param,
      });
    }
    case 'unsupported_request': {
      const outcome = c.log.outcome(undefined);
      return new RouterError('unsupported_request', `no target of ${c.name} can take this request: ${summarize(outcome.attempts)}`, { outcome });
    }
    case 'no_healthy_provider': {
      const outcome = c.log.outcome(undefined, { at: step.recoveryAt, now: c.now });
      return new RouterError('no_healthy_provider', `no healthy target for ${c.name}: ${summarize(outcome.attempts)}`, { outcome });
    }
  }
}

/** `groq/x: skipped: unhealthy; ollama/y: 503 Service Unavailable` — target ids and reasons only, no secrets. */
function summarize(attempts: readonly Attempt[]): string {
  return attempts
    .map((a) => `${a.target}: ${a.outcome === 'skipped' ? `skipped: ${a.reason}` : (a.detail ?? a.reason)}`)
    .join('; ');
}
