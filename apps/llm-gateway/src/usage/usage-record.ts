/**
 * One finished request as a usage record: the request's own fields plus one
 * attempt record per upstream call (skips stay in `plan` only). The answering
 * attempt carries the request's token counts, a failed attempt the tokens its
 * upstream billed for an answer the router turned down (`fail_over_on`);
 * cost = tokens × the attempt's configured price, unknown (null) without one,
 * and the request's cost is the sum over its attempts.
 */
import { costOf, splitTarget, type Attempt, type RequestOutcome, type Usage } from '@mana/llm-router';
import type { AttemptRecord, RequestRecord } from '@mana/llm-usage-store';
import type { ApiCaller } from '../http/api-caller.js';
import { fingerprintOfAuthorization } from '../http/key-fingerprint.js';

export interface FinishedExchange {
  readonly requestId: string;
  /** The inbound API it came through (dialects/inbound-api.ts). */
  readonly api: string;
  readonly status: number;
  readonly code: string | undefined;
  readonly model: string | undefined;
  readonly stream: boolean;
  readonly priority: string | undefined;
  readonly outcome: RequestOutcome | undefined;
  readonly tokenUsage: Usage | undefined;
  readonly durationMs: number;
  readonly ttfbMs: number | undefined;
  readonly authorization: string | undefined;
  /** Who the key names; null with auth off (or refused). */
  readonly caller: ApiCaller | null;
  /** The request's trace id, while tracing is on. */
  readonly traceId: string | undefined;
}

export function usageRecord(ex: FinishedExchange, time: number, replica: string | null): RequestRecord {
  const o = ex.outcome;
  const attempts: AttemptRecord[] = [];
  let totalCost: number | null = null;
  if (o !== undefined) {
    for (const a of o.attempts) {
      if (a.outcome === 'skipped') continue;
      // The answering call is the last one and the result's usage is its own; a failed call carries what it was billed.
      const tokenUsage = a.outcome === 'ok' && a.target === o.target ? ex.tokenUsage : a.usage;
      const record = attemptRecord(a, attempts.length, tokenUsage);
      if (record.costUsd !== null) totalCost = (totalCost ?? 0) + record.costUsd;
      attempts.push(record);
    }
  }
  return {
    requestId: ex.requestId,
    time,
    keyFingerprint: fingerprintOfAuthorization(ex.authorization),
    keyId: ex.caller?.id ?? null,
    keyName: ex.caller?.name ?? null,
    api: ex.api,
    alias: o?.alias ?? null,
    model: ex.model ?? null,
    target: o?.target ?? null,
    provider: (o?.target === undefined ? undefined : splitTarget(o.target)?.provider) ?? null,
    status: ex.status,
    code: ex.code ?? null,
    stream: ex.stream,
    priority: ex.priority ?? null,
    attemptCount: attempts.length,
    plan: o === undefined ? [] : o.attempts.map((a) => ({ target: a.target, outcome: a.outcome, reason: a.reason })),
    durationMs: ex.durationMs,
    ttfbMs: ex.ttfbMs ?? null,
    promptTokens: ex.tokenUsage?.prompt_tokens ?? null,
    completionTokens: ex.tokenUsage?.completion_tokens ?? null,
    cachedTokens: ex.tokenUsage?.cached_tokens ?? null,
    costUsd: totalCost,
    attempts,
    replica,
    traceId: ex.traceId ?? null,
    hedge: o?.hedge ?? null,
  };
}

function attemptRecord(a: Attempt, position: number, tokenUsage: Usage | undefined): AttemptRecord {
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
