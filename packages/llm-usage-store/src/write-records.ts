/**
 * One batch of request records (and their attempts) written in one transaction.
 * Rows carry ids assigned before the first try, and conflicts are ignored, so
 * retrying a batch whose commit was in fact applied writes nothing twice.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import { REQUEST_COLUMNS, addRowTo, decodeRecord, recordsOf, requestRowOf, rowIdOf, type EncodedRecord } from './encoded-record.js';
import { RollupsBuilder, addToRollups } from './rollups.js';
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
  const records = recordsOf(batch);
  await db.transaction().execute(async (tx) => {
    // Only rows stored now count in the rollups: a retried batch whose first try was in fact committed adds nothing.
    const rollups = new RollupsBuilder();
    if (sqlite !== undefined) insertSqlite(sqlite, records, rollups);
    else await insertPostgres(tx, records, rollups);
    await addToRollups(tx, rollups.entries, sqlite === undefined);
  });
}

/**
 * Runs inside the transaction kysely opened on this same connection (its mutex
 * keeps other queries out). Each record is decoded, inserted and counted in
 * turn, so its values are garbage at once instead of living through the batch.
 */
function insertSqlite(database: BetterSqlite3.Database, records: readonly EncodedRecord[], rollups: RollupsBuilder): void {
  const insertRequest = insertStatementOf(database);
  for (const record of records) {
    const values = decodeRecord(record);
    if (insertRequest.run(values).changes > 0) addRowTo(rollups, values);
  }
}

async function insertPostgres(tx: Transaction<UsageDatabase>, records: readonly EncodedRecord[], rollups: RollupsBuilder): Promise<void> {
  for (let start = 0; start < records.length; start += REQUEST_ROWS_PER_INSERT) {
    const rows = records.slice(start, start + REQUEST_ROWS_PER_INSERT).map(decodeRecord);
    const inserted = await tx
      .insertInto('usage_requests')
      .values(rows.map(requestRowOf))
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    const storedIds = new Set(inserted.map((r) => r.id));
    for (const values of rows) if (storedIds.has(rowIdOf(values))) addRowTo(rollups, values);
  }
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
