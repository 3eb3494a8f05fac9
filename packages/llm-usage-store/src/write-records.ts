/**
 * One batch of request records written in one transaction.
 * Rows carry ids assigned before the first try, and conflicts are ignored, so
 * retrying a batch whose commit was in fact applied writes nothing twice.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import type { Cell } from './block-code.js';
import { BlockReader, batchSize, type RecordBatch } from './record-block.js';
import { INSERT_COLUMNS, addRowTo, rowOf, sqliteInsertOf } from './request-row.js';
import type { StoredAttempt } from './stored-attempts.js';
import { RollupsBuilder, addToRollups } from './rollups.js';
import type { UsageDatabase } from './schema.js';

// Bound parameters per statement stay below PostgreSQL's 65 535.
const REQUEST_ROWS_PER_INSERT = 500; // × 25 columns
/** SQLite's rows per INSERT statement (× 25 columns, far below its 32,766 bound parameters): 16 and 64 measured alike. */
const ROWS_PER_SQLITE_INSERT = 32;

/**
 * Writes a batch and adds what it newly stored to the rollups, in one
 * transaction. `sqlite`: the same connection's better-sqlite3 handle, whose
 * cached prepared statements insert rows at a few microseconds each — compiling a
 * kysely INSERT of hundreds of rows and preparing it anew for every batch cost
 * ten times more on the writer's thread, which competes with the request
 * thread for the machine's cores.
 */
export async function writeRecords(db: Kysely<UsageDatabase>, batch: RecordBatch, sqlite: BetterSqlite3.Database | undefined): Promise<void> {
  if (batchSize(batch) <= 0) return;
  try {
    await writeInTransaction(db, batch, sqlite, ROWS_PER_SQLITE_INSERT);
  } catch (error) {
    if (!(error instanceof PartlyStoredRows)) throw error;
    // Rolled back: write it again a row at a time, which tells each stored row apart.
    await writeInTransaction(db, batch, sqlite, 1);
  }
}

async function writeInTransaction(db: Kysely<UsageDatabase>, batch: RecordBatch, sqlite: BetterSqlite3.Database | undefined, rowsPerInsert: number): Promise<void> {
  const tx = await db.startTransaction().execute();
  try {
    // Only rows stored now count in the rollups: a retried batch whose first try was in fact committed adds nothing.
    const rollups = new RollupsBuilder();
    if (sqlite !== undefined) insertSqlite(sqlite, batch, rollups, rowsPerInsert);
    else await insertPostgres(tx, batch, rollups);
    await addToRollups(tx, rollups.entries, sqlite === undefined);
    await tx.commit().execute();
  } catch (error) {
    // The error that stopped the write is the one to report. SQLite ends the
    // transaction by itself on some (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM):
    // the ROLLBACK then fails with "cannot rollback - no transaction is
    // active", and throwing that (as kysely's transaction() does) hid a full
    // disk behind it in /v1/health. The connection is not reused as it is:
    // the store reopens SQLite after a failed write, and PostgreSQL's pool
    // discards a client whose rollback failed.
    await tx.rollback().execute().catch(() => undefined);
    throw error;
  }
}

/**
 * Runs inside the transaction kysely opened on this same connection (its mutex
 * keeps other queries out). Rows go in groups of `rowsPerInsert` per statement:
 * one statement call per row cost as much again as SQLite's own work for the
 * row. Each group's records are read from the block, inserted and counted in
 * turn, so their values are garbage at once instead of living through the batch.
 */
function insertSqlite(database: BetterSqlite3.Database, { block, from }: RecordBatch, rollups: RollupsBuilder, rowsPerInsert: number): void {
  const reader = new BlockReader(block);
  const insertGroup = insertStatementOf(database, rowsPerInsert);
  const columns = INSERT_COLUMNS.length;
  const values: Cell[] = [];
  const attempts: StoredAttempt[][] = [];
  let i = from;
  for (; i + rowsPerInsert <= block.count; i += rowsPerInsert) {
    for (let k = 0; k < rowsPerInsert; k++) attempts[k] = reader.read(i + k, values, k * columns);
    const stored = insertGroup.run(values).changes;
    // A conflict means a retried batch whose first try was committed after all; a group partly stored cannot tell which rows are new.
    if (stored !== rowsPerInsert && stored !== 0) throw new PartlyStoredRows();
    if (stored > 0) attempts.forEach((list, k) => addRowTo(rollups, values, k * columns, list));
  }
  const insertOne = insertStatementOf(database, 1);
  const one: Cell[] = [];
  for (; i < block.count; i++) {
    const list = reader.read(i, one, 0);
    if (insertOne.run(one).changes > 0) addRowTo(rollups, one, 0, list);
  }
}

async function insertPostgres(tx: Transaction<UsageDatabase>, { block, from }: RecordBatch, rollups: RollupsBuilder): Promise<void> {
  const reader = new BlockReader(block);
  for (let start = from; start < block.count; start += REQUEST_ROWS_PER_INSERT) {
    const end = Math.min(block.count, start + REQUEST_ROWS_PER_INSERT);
    const values: Cell[] = [];
    const attempts: StoredAttempt[][] = [];
    for (let i = start; i < end; i++) attempts.push(reader.read(i, values, (i - start) * INSERT_COLUMNS.length));
    const rows = attempts.map((_, k) => rowOf(values, k * INSERT_COLUMNS.length));
    const inserted = await tx
      .insertInto('usage_requests')
      .values(rows)
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    const storedIds = new Set(inserted.map((r) => r.id));
    rows.forEach((row, k) => {
      if (storedIds.has(row.id)) addRowTo(rollups, values, k * INSERT_COLUMNS.length, attempts[k] ?? []);
    });
  }
}

/** A group of rows in a batch matched rows stored before, and others not. */
class PartlyStoredRows extends Error {}

const statements = new WeakMap<BetterSqlite3.Database, Map<number, BetterSqlite3.Statement>>();

function insertStatementOf(database: BetterSqlite3.Database, rows: number): BetterSqlite3.Statement {
  let byRows = statements.get(database);
  if (byRows === undefined) statements.set(database, (byRows = new Map()));
  let statement = byRows.get(rows);
  if (statement === undefined) {
    statement = database.prepare(sqliteInsertOf(rows));
    byRows.set(rows, statement);
  }
  return statement;
}
