/**
 * Requests, newest first, with their attempts; keyset pagination on (ts, id)
 * so a page costs the same however deep the client pages.
 */
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { UsageDatabase, UsageRequestsTable } from './schema.js';
import { attemptsOfRows } from './stored-attempts.js';
import type { AttemptRecord, PlannedTarget, RequestFilter, RequestPage, RequestPageQuery, StoredRequest } from './types.js';
import { keysetPage, pageLimit, pageOf } from './cursor.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './page-size.js';
import { UsageQueryError } from './usage-query-error.js';

type RequestQuery = SelectQueryBuilder<UsageDatabase, 'usage_requests', object>;

export async function queryRequests(db: Kysely<UsageDatabase>, query: RequestPageQuery): Promise<RequestPage> {
  const limit = pageLimit(query.limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const rows = await keysetPage(applyFilter(db.selectFrom('usage_requests'), query).selectAll(), query.cursor, limit).execute();
  const { page, nextCursor } = pageOf(rows, limit);
  const attempts = await attemptsOfRows(db, page);
  return { requests: page.map((row) => toStoredRequest(row, attempts.get(row.id) ?? [])), nextCursor };
}

export function applyFilter(q: RequestQuery, f: RequestFilter): RequestQuery {
  if (f.since !== undefined && f.until !== undefined && f.since > f.until) {
    throw new UsageQueryError('since must not be after until.', 'since');
  }
  if (f.since !== undefined) q = q.where('ts', '>=', f.since);
  if (f.until !== undefined) q = q.where('ts', '<', f.until);
  if (f.alias !== undefined) q = q.where('alias', '=', f.alias);
  if (f.target !== undefined) q = q.where('target', '=', f.target);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.code !== undefined) q = q.where('code', '=', f.code);
  if (f.failedOver !== undefined) q = q.where('failovers', f.failedOver ? '>' : '=', 0);
  // A literal, not a bound parameter: only then may SQLite use the partial index of flagged rows.
  if (f.errorsOnly === true) q = q.where(sql<boolean>`flagged = 1`);
  return q;
}

function toStoredRequest(row: Selectable<UsageRequestsTable>, attempts: AttemptRecord[]): StoredRequest {
  return {
    id: row.id,
    requestId: row.request_id,
    time: Number(row.ts),
    keyFingerprint: row.key_fingerprint,
    alias: row.alias,
    model: row.model,
    target: row.target,
    provider: row.provider,
    status: row.status,
    code: row.code,
    stream: row.stream === 1,
    priority: row.priority,
    attemptCount: row.attempt_count,
    plan: JSON.parse(row.plan) as PlannedTarget[],
    durationMs: Number(row.duration_ms),
    ttfbMs: row.ttfb_ms,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    cachedTokens: row.cached_tokens,
    costUsd: row.cost_usd,
    failovers: row.failovers,
    rescued: row.rescued === 1,
    attempts,
    replica: row.replica,
  };
}
