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
import type { RequestMeasures, RollupsBuilder } from './rollups.js';
import { encodeAttempts, finiteOrNull, finiteOrZero, visitAttemptMeasures } from './stored-attempts.js';
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

/**
 * Encoded records joined for one hand-over: one string, one copy into the
 * worker. A line break separates them: JSON text never holds a raw one.
 */
export function joinBatch(batch: readonly EncodedRecord[]): string {
  return batch.join('\n');
}

/** The records of a batch, each decoded only when its row is written (see `writeRecords`). */
export function recordsOf(batch: readonly EncodedRecord[] | string): readonly EncodedRecord[] {
  return typeof batch === 'string' ? batch.split('\n') : batch;
}

export function decodeRecord(record: EncodedRecord): RequestValues {
  return JSON.parse(record) as RequestValues;
}

export function rowIdOf(v: RequestValues): string {
  return v[R.id] as string;
}

/** One object, refilled for every row added: `RollupsBuilder` keeps no reference to it. */
const requestMeasures: RequestMeasures = {
  ts: 0, alias: null, status: 0, failovers: 0, rescued: 0, prompt_tokens: null, completion_tokens: null, cost_usd: null, duration_ms: 0, ttfb_ms: null,
};

/** Adds what a stored row adds to the rollups: the request's measures, and its attempts'. */
export function addRowTo(rollups: RollupsBuilder, v: RequestValues): void {
  const ts = v[R.ts] as number;
  const ttfb = v[R.ttfb_ms] as number | null;
  const m = requestMeasures;
  m.ts = ts;
  m.alias = v[R.alias] as string | null;
  m.status = v[R.status] as number;
  m.failovers = v[R.failovers] as number;
  m.rescued = v[R.rescued] as number;
  m.prompt_tokens = v[R.prompt_tokens] as number | null;
  m.completion_tokens = v[R.completion_tokens] as number | null;
  m.cost_usd = v[R.cost_usd] as number | null;
  m.duration_ms = v[R.duration_ms] as number;
  m.ttfb_ms = ttfb;
  rollups.addRequest(m);
  visitAttemptMeasures(ts, ttfb, v[R.attempts] as string, (a) => rollups.addAttempt(a));
}

/** A whole row with named columns (the PostgreSQL insert's shape). */
export function requestRowOf(v: RequestValues): RequestRow {
  const row: Record<string, Value> = {};
  for (let i = 0; i < REQUEST_COLUMNS.length; i++) row[REQUEST_COLUMNS[i]!] = v[i] ?? null;
  return row as unknown as RequestRow;
}
