/**
 * Requests, newest first, with their attempts; keyset pagination on (ts, id)
 * so a page costs the same however deep the client pages.
 */
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { UsageDatabase, UsageRequestsTable } from './schema.js';
import { attemptsOfRows } from './stored-attempts.js';
import { ATTEMPT_LIST, REQUEST_COLUMNS } from './request-columns.js';
import type { AttemptRecord, RequestFilter, RequestPage, RequestPageQuery, StoredRequest } from './types.js';
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
  if (f.key !== undefined) q = q.where('key_id', '=', f.key);
  if (f.failedOver !== undefined) q = q.where('failovers', f.failedOver ? '>' : '=', 0);
  // A literal, not a bound parameter: only then may SQLite use the partial index of flagged rows.
  if (f.errorsOnly === true) q = q.where(sql<boolean>`flagged = 1`);
  return q;
}

/** The columns a `StoredRequest` has, as the declaration gives them. */
const SERVED_COLUMNS = REQUEST_COLUMNS.filter((c) => 'field' in c);

/**
 * A row as a `StoredRequest`, column by column as declared: booleans from
 * 0/1, numbers as numbers (PostgreSQL's bigints arrive as text), lists parsed;
 * the attempts from `attemptsOfRows`, which also reads those of rows from
 * before they moved into the row.
 */
function toStoredRequest(row: Selectable<UsageRequestsTable>, attempts: AttemptRecord[]): StoredRequest {
  const stored: Record<string, unknown> = {};
  for (const column of SERVED_COLUMNS) {
    const cell = row[column.name];
    switch (column.kind) {
      case 'boolean':
        stored[column.field] = cell === 1;
        break;
      case 'integer':
      case 'real':
      case 'time':
        stored[column.field] = cell === null ? null : Number(cell);
        break;
      case 'json':
        stored[column.field] = column.list === ATTEMPT_LIST ? attempts : JSON.parse(String(cell));
        break;
      default:
        stored[column.field] = cell;
    }
  }
  // One field per served column, decoded by its kind: the type is derived from the same declaration.
  return stored as StoredRequest;
}
