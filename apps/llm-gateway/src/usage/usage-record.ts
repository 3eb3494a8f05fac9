/**
 * A finished request (finished-request.ts) as the usage store's row: the
 * record's own fields in the store's shape (null for absent), plus one attempt
 * record per upstream call (skips stay in `plan` only; attempt-view.ts renders
 * both and says which tokens each attempt carries). Cost = tokens × the
 * attempt's configured price, unknown (null) without one, and the request's
 * cost is the sum over its attempts. Built only while usage is recorded.
 */
import { splitTarget } from '@mana/llm-router';
import type { AttemptRecord, RequestRecord } from '@mana/llm-usage-store';
import { attemptRecord, attemptTokens, plannedTarget } from '../attempt-view.js';
import type { FinishedRequest } from '../finished-request.js';
import { fingerprintOfAuthorization } from '../http/key-fingerprint.js';

/** `authorization`: the key as presented, for its fingerprint only (never stored). */
export function usageRecord(r: FinishedRequest, authorization: string | undefined, time: number, replica: string | null): RequestRecord {
  const o = r.outcome;
  const attempts: AttemptRecord[] = [];
  let totalCost: number | null = null;
  if (o !== undefined) {
    for (const a of o.attempts) {
      if (a.outcome === 'skipped') continue;
      const record = attemptRecord(a, attempts.length, attemptTokens(o, a, r.tokenUsage));
      if (record.costUsd !== null) totalCost = (totalCost ?? 0) + record.costUsd;
      attempts.push(record);
    }
  }
  return {
    requestId: r.requestId,
    time,
    keyFingerprint: fingerprintOfAuthorization(authorization),
    keyId: r.caller?.id ?? null,
    keyName: r.caller?.name ?? null,
    api: r.api,
    alias: o?.alias ?? null,
    model: r.model ?? null,
    target: o?.target ?? null,
    provider: (o?.target === undefined ? undefined : splitTarget(o.target)?.provider) ?? null,
    status: r.status,
    code: r.code ?? null,
    stream: r.stream,
    priority: r.priority ?? null,
    attemptCount: attempts.length,
    plan: o === undefined ? [] : o.attempts.map(plannedTarget),
    durationMs: r.durationMs,
    ttfbMs: r.ttfbMs ?? null,
    promptTokens: r.tokenUsage?.prompt_tokens ?? null,
    completionTokens: r.tokenUsage?.completion_tokens ?? null,
    cachedTokens: r.tokenUsage?.cached_tokens ?? null,
    costUsd: totalCost,
    attempts,
    replica,
    traceId: r.traceId ?? null,
    hedge: o?.hedge ?? null,
  };
}
