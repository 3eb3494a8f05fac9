/**
 * One router `Attempt` as the gateway shows it outside, in one place: on the
 * log line (every attempt, skips included), in the usage record's plan (the
 * same list, three fields) and as an attempt record of the usage store (the
 * upstream calls only, each with the tokens it carries and their cost). The
 * three shapes are fixed interfaces (the documented log line, the store's
 * columns), so they stay three small renderers; what they share — which
 * attempt answered, and so which tokens it carries — is decided here once.
 */
import { costOf, type Attempt, type RequestOutcome, type Usage } from '@mana/llm-router';
import type { AttemptRecord, PlannedTarget } from '@mana/llm-usage-store';

/** The attempt that answered the request: its target's last call, and it succeeded. */
export function isAnswer(outcome: RequestOutcome, a: Attempt): boolean {
  return a.outcome === 'ok' && a.target === outcome.target;
}

/**
 * The tokens an attempt carries: the answering one the request's own (the
 * result's usage is its call's), a failed one what its upstream billed for an
 * answer the router turned down (`fail_over_on`).
 */
export function attemptTokens(outcome: RequestOutcome, a: Attempt, requestUsage: Usage | undefined): Usage | undefined {
  return isAnswer(outcome, a) ? requestUsage : a.usage;
}

/** An attempt on the log line (key order is the line's: tests and docs read it). */
export interface LoggedAttempt {
  target: string;
  outcome: string;
  reason: string;
  status?: number;
  ms: number;
  /** What else the attempt met (e.g. stream events it went on without). */
  detail?: string;
}

export function attemptLog(a: Attempt): LoggedAttempt {
  const out: LoggedAttempt = { target: a.target, outcome: a.outcome, reason: a.reason, ms: Math.round(a.durationMs * 10) / 10 };
  if (a.status !== undefined) out.status = a.status;
  if (a.detail !== undefined) out.detail = a.detail;
  return out;
}

/** An attempt in the usage record's plan, skipped ones included. */
export function plannedTarget(a: Attempt): PlannedTarget {
  return { target: a.target, outcome: a.outcome, reason: a.reason };
}

/** An upstream call as the usage store keeps it; cost = tokens × its configured price, null without one. */
export function attemptRecord(a: Attempt, position: number, tokenUsage: Usage | undefined): AttemptRecord {
  return {
    position,
    target: a.target,
    provider: a.provider,
    model: a.model,
    outcome: a.outcome,
    reason: a.reason,
    upstreamStatus: a.status ?? null,
    durationMs: a.durationMs,
    promptTokens: tokenUsage?.prompt_tokens ?? null,
    completionTokens: tokenUsage?.completion_tokens ?? null,
    cachedTokens: tokenUsage?.cached_tokens ?? null,
    costUsd: costOf(tokenUsage, a.price) ?? null,
    failedOver: a.failedOver,
  };
}
