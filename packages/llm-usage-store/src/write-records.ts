/**
 * One batch of request records written in one transaction.
 * Rows carry ids assigned before the first try, and conflicts are ignored, so
 * retrying a batch whose commit was in fact applied writes nothing twice.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import { BlockReader, batchSize, type RecordBatch } from './record-block.js';
import { REQUEST_COLUMNS, addRowTo, requestRowOf, requestValues } from './request-row.js';
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
export async function writeRecords(db: Kysely<UsageDatabase>, batch: RecordBatch, sqlite: BetterSqlite3.Database | undefined): Promise<void> {
  if (batchSize(batch) <= 0) return;
  await db.transaction().execute(async (tx) => {
    // Only rows stored now count in the rollups: a retried batch whose first try was in fact committed adds nothing.
    const rollups = new RollupsBuilder();
    if (sqlite !== undefined) insertSqlite(sqlite, batch, rollups);
    else await insertPostgres(tx, batch, rollups);
    await addToRollups(tx, rollups.entries, sqlite === undefined);
  });
}

/**
 * Runs inside the transaction kysely opened on this same connection (its mutex
 * keeps other queries out). Each record is read from the block, inserted and
 * counted in turn, so its values are garbage at once instead of living
 * through the batch.
 */
function insertSqlite(database: BetterSqlite3.Database, { block, from }: RecordBatch, rollups: RollupsBuilder): void {
  const insertRequest = insertStatementOf(database);
  const reader = new BlockReader(block);
  for (let i = from; i < block.count; i++) {
    const record = reader.record(i);
    if (insertRequest.run(requestValues(record)).changes > 0) addRowTo(rollups, record);
  }
}

async function insertPostgres(tx: Transaction<UsageDatabase>, { block, from }: RecordBatch, rollups: RollupsBuilder): Promise<void> {
  const reader = new BlockReader(block);
  for (let start = from; start < block.count; start += REQUEST_ROWS_PER_INSERT) {
    const records = [];
    for (let i = start; i < Math.min(block.count, start + REQUEST_ROWS_PER_INSERT); i++) records.push(reader.record(i));
    const inserted = await tx
      .insertInto('usage_requests')
      .values(records.map((r) => requestRowOf(requestValues(r))))
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    const storedIds = new Set(inserted.map((r) => r.id));
    for (const record of records) if (storedIds.has(record.id)) addRowTo(rollups, record);
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
