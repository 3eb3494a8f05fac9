/**
 * Housekeeping, run in the background: retention and planner statistics.
 *
 * Retention: delete requests (and their attempts) older than a cutoff, a
 * bounded number of rows per statement so that SQLite — synchronous in this
 * process — never blocks the event loop for long, and PostgreSQL never holds
 * a large lock.
 */
import { sql, type Kysely } from 'kysely';
import { HOUR_MS, pruneRollups } from './rollups.js';
import type { UsageDatabase } from './schema.js';

const ROWS_PER_DELETE = 2_000;

/**
 * Deletes what is older than `cutoff` rounded down to the hour, rollups
 * included: an hour's rollup and its rows go together, so no summary counts
 * rows that are gone. Returns the number of request records deleted.
 */
export async function pruneBefore(db: Kysely<UsageDatabase>, requestedCutoff: number, kind: 'sqlite' | 'postgres'): Promise<number> {
  const cutoff = requestedCutoff - (requestedCutoff % HOUR_MS);
  let deleted = 0;
  for (;;) {
    const ids = (
      await db.selectFrom('usage_requests').select('id').where('ts', '<', cutoff).limit(ROWS_PER_DELETE).execute()
    ).map((r) => r.id);
    if (ids.length === 0) break;
    await db.transaction().execute(async (tx) => {
      // Attempts of rows from before migration 0013 (later ones are in their row).
      await tx.deleteFrom('usage_attempts').where('request_row_id', 'in', ids).execute();
      await tx.deleteFrom('usage_requests').where('id', 'in', ids).execute();
    });
    deleted += ids.length;
    if (ids.length < ROWS_PER_DELETE) break;
    // Let requests run between chunks.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await db.transaction().execute(async (tx) => {
    // Writers (other replicas too) wait while the cutoff's day is rebuilt; SQLite's transaction excludes them anyway.
    if (kind === 'postgres') await sql`LOCK TABLE usage_rollups IN SHARE ROW EXCLUSIVE MODE`.execute(tx);
    await pruneRollups(tx, cutoff);
  });
  return deleted;
}

/**
 * Refreshes the planner's statistics. Without them SQLite answers a time-window
 * summary by walking the whole alias index (every row ever stored) instead of
 * seeking the window. SQLite samples at most ANALYSIS_ROW_LIMIT rows per index
 * so this stays in the low milliseconds; PostgreSQL's ANALYZE samples anyway.
 */
export async function refreshStatistics(db: Kysely<UsageDatabase>, kind: 'sqlite' | 'postgres'): Promise<void> {
  if (kind === 'sqlite') {
    await sql`PRAGMA analysis_limit = ${sql.lit(ANALYSIS_ROW_LIMIT)}`.execute(db);
    await sql`ANALYZE`.execute(db);
  } else {
    await sql`ANALYZE usage_requests`.execute(db);
    await sql`ANALYZE usage_attempts`.execute(db);
    await sql`ANALYZE usage_rollups`.execute(db);
  }
}

const ANALYSIS_ROW_LIMIT = 1_000;
