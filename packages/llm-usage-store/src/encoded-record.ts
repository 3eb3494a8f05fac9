/**
 * A request record as it travels from the request thread to the writer: one
 * short JSON text holding its table row as a value list in column order (its
 * attempts are one of the values: stored-attempts.ts).
 *
 * Why text and not the record object: the record is encoded once, on the
 * request path, into a single string that lives until its batch is written.
 * A record object graph (the record, its attempts, its plan) had to be copied
 * by the structured clone into the worker and walked again there, and while
 * queued it was one more graph for the garbage collector to trace; together
 * that cost more than the SQLite insert itself. A string crosses to the worker
 * as one copy, and its value list binds straight to the prepared INSERT.
 */
import type { Selectable } from 'kysely';
import type { UsageRequestsTable } from './schema.js';
import type { AttemptMeasures, RequestMeasures } from './rollups.js';
import { attemptMeasuresOf, encodeAttempts, finiteOrNull, finiteOrZero } from './stored-attempts.js';
import type { RequestRecord } from './types.js';

/** A record ready for the writer: see `encodeRecord`. */
export type EncodedRecord = string;

export type RequestRow = Selectable<UsageRequestsTable>;
type Value = string | number | null;

export const REQUEST_COLUMNS = [
  'id', 'request_id', 'ts', 'key_fingerprint', 'alias', 'model', 'target', 'provider', 'status', 'code', 'stream', 'priority',
  'attempt_count', 'plan', 'duration_ms', 'ttfb_ms', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd',
  'failovers', 'rescued', 'flagged', 'replica', 'attempts',
] as const satisfies readonly (keyof UsageRequestsTable)[];

/** A row's values in `REQUEST_COLUMNS` order. */
export type RequestValues = Value[];

const R = Object.fromEntries(REQUEST_COLUMNS.map((c, i) => [c, i])) as { readonly [C in (typeof REQUEST_COLUMNS)[number]]: number };

/**
 * The record under row id `id` (unique, assigned once: a retried batch carries
 * the same ids, so nothing is written twice). Derived columns are computed
 * here: `failovers`, `rescued` and `flagged`.
 */
export function encodeRecord(id: string, r: RequestRecord): EncodedRecord {
  let failovers = 0;
  for (const a of r.attempts) if (a.failedOver) failovers++;
  const values: RequestValues = [
    id, r.requestId, finiteOrZero(r.time), r.keyFingerprint, r.alias, r.model, r.target, r.provider, finiteOrZero(r.status), r.code, r.stream ? 1 : 0, r.priority,
    finiteOrZero(r.attemptCount), JSON.stringify(r.plan), finiteOrZero(r.durationMs), finiteOrNull(r.ttfbMs),
    finiteOrNull(r.promptTokens), finiteOrNull(r.completionTokens), finiteOrNull(r.cachedTokens), finiteOrNull(r.costUsd),
    failovers, failovers > 0 && r.status < 400 ? 1 : 0, r.status >= 400 || failovers > 0 ? 1 : 0, r.replica,
    encodeAttempts(r.attempts),
  ];
  return JSON.stringify(values);
}

/** Encoded records joined for one hand-over: one string, one copy into the worker. */
export function joinBatch(batch: readonly EncodedRecord[]): string {
  return `[${batch.join(',')}]`;
}

/** The rows of a batch, as value lists in column order. */
export function decodeBatch(batch: readonly EncodedRecord[] | string): RequestValues[] {
  return JSON.parse(typeof batch === 'string' ? batch : joinBatch(batch)) as RequestValues[];
}

export function rowIdOf(v: RequestValues): string {
  return v[R.id] as string;
}

/** What a stored row adds to the rollups: the request's measures, and its attempts'. */
export function addMeasuresOf(v: RequestValues, into: { requests: RequestMeasures[]; attempts: AttemptMeasures[] }): void {
  const ts = v[R.ts] as number;
  const ttfb = v[R.ttfb_ms] as number | null;
  // A literal of fixed shape, cheap to make for every row.
  into.requests.push({
    ts,
    alias: v[R.alias] as string | null,
    status: v[R.status] as number,
    failovers: v[R.failovers] as number,
    rescued: v[R.rescued] as number,
    prompt_tokens: v[R.prompt_tokens] as number | null,
    completion_tokens: v[R.completion_tokens] as number | null,
    cost_usd: v[R.cost_usd] as number | null,
    duration_ms: v[R.duration_ms] as number,
    ttfb_ms: ttfb,
  });
  attemptMeasuresOf(ts, ttfb, v[R.attempts] as string, into.attempts);
}

/** A whole row with named columns (the PostgreSQL insert's shape). */
export function requestRowOf(v: RequestValues): RequestRow {
  const row: Record<string, Value> = {};
  for (let i = 0; i < REQUEST_COLUMNS.length; i++) row[REQUEST_COLUMNS[i]!] = v[i] ?? null;
  return row as unknown as RequestRow;
}
