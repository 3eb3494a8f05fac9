/**
 * Keyset pagination on (ts, id), shared by every newest-first listing (usage
 * requests, config history): the page-size check, the "older than the cursor"
 * condition and the next cursor. Cursors are opaque to clients, and one this
 * API did not return is a 400, never a 500.
 */
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { UsageDatabase } from './schema.js';
import { UsageQueryError } from './usage-query-error.js';

type ListedTable = 'usage_requests' | 'config_versions';

export function encodeCursor(ts: number, id: string): string {
  return Buffer.from(`${ts}:${id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): { ts: number; id: string } {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const colon = text.indexOf(':');
  const ts = Number(text.slice(0, colon));
  const id = text.slice(colon + 1);
  if (colon < 1 || !Number.isSafeInteger(ts) || id.length === 0 || id.length > 64) {
    throw new UsageQueryError('cursor is not one this API returned.', 'cursor');
  }
  return { ts, id };
}

/** The page size asked for, or `fallback`; an integer from 1 to `max`, else a UsageQueryError. */
export function pageLimit(limit: number | undefined, fallback: number, max: number): number {
  const value = limit ?? fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new UsageQueryError(`limit must be an integer from 1 to ${max}.`, 'limit');
  }
  return value;
}

/** Rows after (ts, id) in newest-first order (both listed tables have these two columns). */
export function olderThan(ts: number, id: string): RawBuilder<boolean> {
  return sql<boolean>`(ts < ${ts} OR (ts = ${ts} AND id < ${id}))`;
}

/** Newest first, after `cursor` when given, one row more than a page (to know whether another follows). */
export function keysetPage<T extends ListedTable, O>(q: SelectQueryBuilder<UsageDatabase, T, O>, cursor: string | undefined, limit: number) {
  if (cursor !== undefined) {
    const { ts, id } = decodeCursor(cursor);
    q = q.where(olderThan(ts, id));
  }
  return q.orderBy(sql`ts`, 'desc').orderBy(sql`id`, 'desc').limit(limit + 1);
}

/** The page and the cursor of the page after it (null on the last one), from `limit + 1` rows. */
export function pageOf<R extends { ts: number; id: string }>(rows: readonly R[], limit: number): { page: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(Number(last.ts), last.id) : null };
}
