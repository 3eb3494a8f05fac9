/**
 * Builders of request records for the tests, this package's and the gateway's
 * (`@mana/llm-usage-store/test-records`, resolved under the `development`
 * condition only). Not shipped: tsconfig.build.json leaves this file out.
 */
import { recordBatch, type RecordBatch } from './record-block.js';
import type { AttemptRecord, RequestRecord } from './types.js';

export function attempt(position: number, over: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    position,
    target: 'groq/llama-3.1-8b-instant',
    provider: 'groq',
    model: 'llama-3.1-8b-instant',
    outcome: 'ok',
    reason: 'ok',
    upstreamStatus: 200,
    durationMs: 120,
    promptTokens: 10,
    completionTokens: 5,
    cachedTokens: null,
    costUsd: 0.000015,
    failedOver: false,
    ...over,
  };
}

export function request(over: Partial<RequestRecord> = {}): RequestRecord {
  const attempts = over.attempts ?? [attempt(0)];
  const final = attempts.at(-1);
  return {
    requestId: 'req-1',
    time: Date.UTC(2026, 10, 30, 12, 0, 0),
    keyFingerprint: 'k:1a2b3c4d',
    keyId: 'env-1',
    keyName: 'env-1',
    replica: 'gw-a:3025',
    api: 'chat_completions',
    traceId: null,
    hedge: null,
    alias: 'fast-text',
    model: 'fast-text',
    target: final?.target ?? null,
    provider: final?.provider ?? null,
    status: 200,
    code: null,
    stream: false,
    priority: null,
    attemptCount: attempts.length,
    plan: attempts.map((a) => ({ target: a.target, outcome: a.outcome, reason: a.reason })),
    durationMs: 250,
    ttfbMs: 240,
    promptTokens: final?.promptTokens ?? null,
    completionTokens: final?.completionTokens ?? null,
    cachedTokens: null,
    costUsd: attempts.some((a) => a.costUsd !== null) ? attempts.reduce((sum, a) => sum + (a.costUsd ?? 0), 0) : null,
    ...over,
    attempts,
  };
}

/** The example: the first target fails (503) and fails over, the second answers. */
export function rescuedRequest(over: Partial<RequestRecord> = {}): RequestRecord {
  return request({
    attempts: [
      attempt(0, {
        target: 'groq/llama-3.1-8b-instant',
        outcome: 'failed',
        reason: 'http_503',
        upstreamStatus: 503,
        durationMs: 30,
        promptTokens: null,
        completionTokens: null,
        costUsd: null,
        failedOver: true,
      }),
      attempt(1, { target: 'ollama/gemma3:4b', provider: 'ollama', model: 'gemma3:4b', costUsd: null }),
    ],
    ...over,
  });
}

/**
 * A record in which every column holds a value (none null), most of them
 * unlike any other's: what the column declaration's tests store and read back
 * (request-columns.test.ts here, usage-columns.e2e.test.ts through the gateway).
 */
export function everyColumnRequest(over: Partial<RequestRecord> = {}): RequestRecord {
  return request({
    requestId: 'req-every-column',
    keyFingerprint: 'k:every',
    keyId: 'key-every',
    keyName: 'every-service',
    replica: 'gw-every:3025',
    api: 'messages',
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    hedge: 'lost',
    alias: 'every-alias',
    model: 'every-model',
    status: 503,
    code: 'all_targets_failed',
    stream: true,
    priority: 'high',
    durationMs: 812.5,
    ttfbMs: 120.25,
    promptTokens: 11,
    completionTokens: 13,
    cachedTokens: 4,
    costUsd: 0.000031,
    attempts: [
      attempt(0, { outcome: 'failed', reason: 'http_429', upstreamStatus: 429, durationMs: 3.5, promptTokens: 1, completionTokens: 2, cachedTokens: 3, costUsd: 0.000001, failedOver: true }),
      attempt(1, { target: 'ollama/every', provider: 'ollama', model: 'every', outcome: 'failed', reason: 'http_503', upstreamStatus: 503, durationMs: 90.5, cachedTokens: 5, failedOver: false }),
    ],
    ...over,
  });
}

/** A batch of one request with this request id, as `UsageStore.write` takes it. */
export function oneRequest(requestId: string): RecordBatch {
  return recordBatch([request({ requestId })]);
}
