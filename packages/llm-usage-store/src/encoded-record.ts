/**
 * A request record as it travels from the request thread to the writer: one
 * short JSON text holding its table rows as value lists in column order,
 * `[requestRow, attemptRow, …]`.
 *
 * Why text and not the record object: the record is encoded once, on the
 * request path, into a single string that lives until its batch is written.
 * A record object graph (the record, its attempts, its plan) had to be copied
 * by the structured clone into the worker and walked again there, and while
 * queued it was one more graph for the garbage collector to trace; together
 * that cost more than the SQLite insert itself. A string crosses to the worker
 * as one copy, and its value lists bind straight to the prepared INSERTs.
 */
import type { Selectable } from 'kysely';
import type { UsageAttemptsTable, UsageRequestsTable } from './schema.js';
import type { AttemptMeasures, RequestMeasures } from './rollups.js';
import type { RequestRecord } from './types.js';

/** A record ready for the writer: see `encodeRecord`. */
export type EncodedRecord = string;

export type RequestRow = Selectable<UsageRequestsTable>;
export type AttemptRow = Selectable<UsageAttemptsTable>;
type Value = string | number | null;

export const REQUEST_COLUMNS = [
  'id', 'request_id', 'ts', 'key_fingerprint', 'alias', 'model', 'target', 'provider', 'status', 'code', 'stream', 'priority',
  'attempt_count', 'plan', 'duration_ms', 'ttfb_ms', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd',
  'failovers', 'rescued', 'flagged', 'replica',
] as const satisfies readonly (keyof UsageRequestsTable)[];
export const ATTEMPT_COLUMNS = [
  'request_row_id', 'position', 'ts', 'alias', 'target', 'provider', 'model', 'outcome', 'reason', 'upstream_status',
  'duration_ms', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd', 'failed_over', 'final', 'rescue', 'ttfb_ms',
] as const satisfies readonly (keyof UsageAttemptsTable)[];

/** The column order of value lists: `REQUEST_COLUMNS` / `ATTEMPT_COLUMNS`. */
export type RequestValues = Value[];
export type AttemptValues = Value[];

/** A number JSON can carry (`NaN` and `±Infinity` would arrive as null), else null: for nullable columns. */
function finiteOrNull(value: number | null): number | null {
  return value !== null && Number.isFinite(value) ? value : null;
}

/** For NOT NULL columns: a null there would fail the whole batch, and every retry of it. */
function finiteOrZero(value: number): number {
  return Number.isFinite(value) ? value : 0;
}

/**
 * The record under row id `id` (unique, assigned once: a retried batch carries
 * the same ids, so nothing is written twice). Derived columns are computed
 * here: `failovers`, `rescued` and `flagged` on the request, `final` and
 * `rescue` on each attempt, the request's time to first byte on its last attempt.
 */
export function encodeRecord(id: string, r: RequestRecord): EncodedRecord {
  const attempts = r.attempts;
  const last = attempts.length - 1;
  let failovers = 0;
  const rows: Value[][] = [[]];
  for (let i = 0; i <= last; i++) {
    const a = attempts[i]!;
    // `rescue`: this attempt answered after an earlier one had failed over.
    const rescue = a.outcome === 'ok' && failovers > 0 ? 1 : 0;
    if (a.failedOver) failovers++;
    rows.push([
      id, finiteOrZero(a.position), finiteOrZero(r.time), r.alias, a.target, a.provider, a.model, a.outcome, a.reason, finiteOrNull(a.upstreamStatus),
      finiteOrZero(a.durationMs), finiteOrNull(a.promptTokens), finiteOrNull(a.completionTokens), finiteOrNull(a.cachedTokens), finiteOrNull(a.costUsd), a.failedOver ? 1 : 0,
      i === last && !a.failedOver ? 1 : 0, rescue, i === last ? finiteOrNull(r.ttfbMs) : null,
    ]);
  }
  rows[0] = [
    id, r.requestId, finiteOrZero(r.time), r.keyFingerprint, r.alias, r.model, r.target, r.provider, finiteOrZero(r.status), r.code, r.stream ? 1 : 0, r.priority,
    finiteOrZero(r.attemptCount), JSON.stringify(r.plan), finiteOrZero(r.durationMs), finiteOrNull(r.ttfbMs),
    finiteOrNull(r.promptTokens), finiteOrNull(r.completionTokens), finiteOrNull(r.cachedTokens), finiteOrNull(r.costUsd),
    failovers, failovers > 0 && r.status < 400 ? 1 : 0, r.status >= 400 || failovers > 0 ? 1 : 0, r.replica,
  ];
  return JSON.stringify(rows);
}

/** Encoded records joined for one hand-over: one string, one copy into the worker. */
export function joinBatch(batch: readonly EncodedRecord[]): string {
  return `[${batch.join(',')}]`;
}

/** The rows of a batch, as value lists in column order. */
export function decodeBatch(batch: readonly EncodedRecord[] | string): { requests: RequestValues[]; attempts: AttemptValues[] } {
  const records = JSON.parse(typeof batch === 'string' ? batch : joinBatch(batch)) as Value[][][];
  const requests: RequestValues[] = [];
  const attempts: AttemptValues[] = [];
  for (const rows of records) {
    requests.push(rows[0]!);
    for (let i = 1; i < rows.length; i++) attempts.push(rows[i]!);
  }
  return { requests, attempts };
}

const R = Object.fromEntries(REQUEST_COLUMNS.map((c, i) => [c, i])) as { readonly [C in (typeof REQUEST_COLUMNS)[number]]: number };
const A = Object.fromEntries(ATTEMPT_COLUMNS.map((c, i) => [c, i])) as { readonly [C in (typeof ATTEMPT_COLUMNS)[number]]: number };

/** What a stored request row adds to the rollups: a literal of fixed shape, cheap to make for every row. */
export function requestMeasuresOf(v: RequestValues): RequestMeasures {
  return {
    ts: v[R.ts] as number,
    alias: v[R.alias] as string | null,
    status: v[R.status] as number,
    failovers: v[R.failovers] as number,
    rescued: v[R.rescued] as number,
    prompt_tokens: v[R.prompt_tokens] as number | null,
    completion_tokens: v[R.completion_tokens] as number | null,
    cost_usd: v[R.cost_usd] as number | null,
    duration_ms: v[R.duration_ms] as number,
    ttfb_ms: v[R.ttfb_ms] as number | null,
  };
}

export function attemptMeasuresOf(v: AttemptValues): AttemptMeasures {
  return {
    ts: v[A.ts] as number,
    target: v[A.target] as string,
    provider: v[A.provider] as string,
    final: v[A.final] as number,
    outcome: v[A.outcome] as string,
    rescue: v[A.rescue] as number,
    prompt_tokens: v[A.prompt_tokens] as number | null,
    completion_tokens: v[A.completion_tokens] as number | null,
    cost_usd: v[A.cost_usd] as number | null,
    duration_ms: v[A.duration_ms] as number,
    ttfb_ms: v[A.ttfb_ms] as number | null,
  };
}

/** A whole row with named columns (the PostgreSQL insert's shape). */
export function requestRowOf(values: RequestValues): RequestRow {
  return rowOf(REQUEST_COLUMNS, values) as unknown as RequestRow;
}

export function attemptRowOf(values: AttemptValues): AttemptRow {
  return rowOf(ATTEMPT_COLUMNS, values) as unknown as AttemptRow;
}

function rowOf(columns: readonly string[], values: Value[]): Record<string, Value> {
  const row: Record<string, Value> = {};
  for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i] ?? null;
  return row;
}
