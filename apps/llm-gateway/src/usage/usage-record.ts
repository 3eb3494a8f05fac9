/**
 * One finished request as a usage record: the request's own fields plus one
 * attempt record per upstream call (skips stay in `plan` only; attempt-view.ts
 * renders both and says which tokens each attempt carries). Cost = tokens ×
 * the attempt's configured price, unknown (null) without one, and the
 * request's cost is the sum over its attempts.
 */
import { splitTarget, type RequestOutcome, type Usage } from '@mana/llm-router';
import type { AttemptRecord, RequestRecord } from '@mana/llm-usage-store';
import { attemptRecord, attemptTokens, plannedTarget } from '../attempt-view.js';
import type { ApiCaller } from '../http/api-caller.js';
import { fingerprintOfAuthorization } from '../http/key-fingerprint.js';

export interface FinishedExchange {
  readonly requestId: string;
  /** The inbound API it came through (routes/inbound-api.ts). */
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
      const record = attemptRecord(a, attempts.length, attemptTokens(o, a, ex.tokenUsage));
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
    plan: o === undefined ? [] : o.attempts.map(plannedTarget),
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
