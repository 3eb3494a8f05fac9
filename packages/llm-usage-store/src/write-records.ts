/**
 * One batch of request records (and their attempts) written in one transaction.
 * Rows carry ids assigned before the first try, and conflicts are ignored, so
 * retrying a batch whose commit was in fact applied writes nothing twice.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import { REQUEST_COLUMNS, addMeasuresOf, decodeBatch, requestRowOf, rowIdOf, type EncodedRecord, type RequestValues } from './encoded-record.js';
import { addToRollups, rollupsOf, type AttemptMeasures, type RequestMeasures } from './rollups.js';
import type { UsageDatabase } from './schema.js';

// Bound parameters per statement stay below PostgreSQL's 65 535.
const REQUEST_ROWS_PER_INSERT = 500; // × 25 columns

/**
 * Writes a batch and adds what it newly stored to the rollups, in one
 * transaction. `sqlite`: the same connection's better-sqlite3 handle, whose
 * cached prepared statement inserts a row in a few microseconds — compiling a
 * kysely INSERT of hundreds of rows and preparing it anew for every batch cost
 * ten times more on the writer's thread, which competes with the request
 * thread for the machine's cores.
 */
export async function writeRecords(db: Kysely<UsageDatabase>, batch: readonly EncodedRecord[] | string, sqlite: BetterSqlite3.Database | undefined): Promise<void> {
  if (batch.length === 0) return;
  const rows = decodeBatch(batch);
  if (rows.length === 0) return;
  await db.transaction().execute(async (tx) => {
    // Only rows stored now count in the rollups: a retried batch whose first try was in fact committed adds nothing.
    const stored = sqlite !== undefined ? insertSqlite(sqlite, rows) : await insertPostgres(tx, rows);
    await addToRollups(tx, rollupsOf(stored.requests, stored.attempts), sqlite === undefined);
  });
}

/** What the rows stored now add to the rollups. */
interface Stored {
  readonly requests: RequestMeasures[];
  readonly attempts: AttemptMeasures[];
}

/** Runs inside the transaction kysely opened on this same connection (its mutex keeps other queries out). */
function insertSqlite(database: BetterSqlite3.Database, rows: RequestValues[]): Stored {
  const insertRequest = insertStatementOf(database);
  const stored: Stored = { requests: [], attempts: [] };
  for (const values of rows) if (insertRequest.run(values).changes > 0) addMeasuresOf(values, stored);
  return stored;
}

async function insertPostgres(tx: Transaction<UsageDatabase>, rows: RequestValues[]): Promise<Stored> {
  const stored: Stored = { requests: [], attempts: [] };
  for (let start = 0; start < rows.length; start += REQUEST_ROWS_PER_INSERT) {
    const end = Math.min(rows.length, start + REQUEST_ROWS_PER_INSERT);
    const inserted = await tx
      .insertInto('usage_requests')
      .values(rows.slice(start, end).map(requestRowOf))
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    const storedIds = new Set(inserted.map((r) => r.id));
    for (let i = start; i < end; i++) if (storedIds.has(rowIdOf(rows[i]!))) addMeasuresOf(rows[i]!, stored);
  }
  return stored;
}

const statements = new WeakMap<BetterSqlite3.Database, BetterSqlite3.Statement>();

function insertStatementOf(database: BetterSqlite3.Database): BetterSqlite3.Statement {
  let statement = statements.get(database);
  if (statement === undefined) {
    statement = database.prepare(
      `INSERT INTO usage_requests (${REQUEST_COLUMNS.join(', ')}) VALUES (${REQUEST_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT (id) DO NOTHING`,
    );
    statements.set(database, statement);
  }
  return statement;
}
