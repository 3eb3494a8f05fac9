/**
 * A request record as its `usage_requests` row: the values in column order,
 * and what the row adds to the rollups.
 */
import type { Selectable } from 'kysely';
import type { BlockRecord } from './record-block.js';
import type { RequestMeasures, RollupsBuilder } from './rollups.js';
import type { UsageRequestsTable } from './schema.js';
import { visitStoredAttempts } from './stored-attempts.js';

export type RequestRow = Selectable<UsageRequestsTable>;
type Value = string | number | null;

export const REQUEST_COLUMNS = [
  'id', 'request_id', 'ts', 'key_fingerprint', 'alias', 'model', 'target', 'provider', 'status', 'code', 'stream', 'priority',
  'attempt_count', 'plan', 'duration_ms', 'ttfb_ms', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd',
  'failovers', 'rescued', 'flagged', 'replica', 'attempts',
] as const satisfies readonly (keyof UsageRequestsTable)[];

/** A row's values in `REQUEST_COLUMNS` order: bound as they are to the SQLite INSERT. */
export type RequestValues = Value[];

export function requestValues(r: BlockRecord): RequestValues {
  return [
    r.id, r.requestId, r.time, r.keyFingerprint, r.alias, r.model, r.target, r.provider, r.status, r.code, r.stream, r.priority,
    r.attemptCount, r.plan, r.durationMs, r.ttfbMs, r.promptTokens, r.completionTokens, r.cachedTokens, r.costUsd,
    r.failovers, r.rescued, r.flagged, r.replica, r.attempts,
  ];
}

/** A whole row with named columns (the PostgreSQL insert's shape). */
export function requestRowOf(v: RequestValues): RequestRow {
  const row: Record<string, Value> = {};
  for (let i = 0; i < REQUEST_COLUMNS.length; i++) row[REQUEST_COLUMNS[i]!] = v[i] ?? null;
  return row as unknown as RequestRow;
}

/** One object, refilled for every row added: `RollupsBuilder` keeps no reference to it. */
const requestMeasures: RequestMeasures = {
  ts: 0, alias: null, status: 0, failovers: 0, rescued: 0, prompt_tokens: null, completion_tokens: null, cost_usd: null, duration_ms: 0, ttfb_ms: null,
};

/** Adds what a stored row adds to the rollups: the request's measures, and its attempts'. */
export function addRowTo(rollups: RollupsBuilder, r: BlockRecord): void {
  const m = requestMeasures;
  m.ts = r.time;
  m.alias = r.alias;
  m.status = r.status;
  m.failovers = r.failovers;
  m.rescued = r.rescued;
  m.prompt_tokens = r.promptTokens;
  m.completion_tokens = r.completionTokens;
  m.cost_usd = r.costUsd;
  m.duration_ms = r.durationMs;
  m.ttfb_ms = r.ttfbMs;
  rollups.addRequest(m);
  visitStoredAttempts(r.time, r.ttfbMs, r.attemptList, (a) => rollups.addAttempt(a));
}
