/**
 * One batch of request records (and their attempts) written in one transaction.
 * Rows carry ids assigned before the first try, and conflicts are ignored, so
 * retrying a batch whose commit was in fact applied writes nothing twice.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import {
  ATTEMPT_COLUMNS,
  REQUEST_COLUMNS,
  attemptMeasuresOf,
  attemptRowOf,
  decodeBatch,
  requestMeasuresOf,
  requestRowOf,
  type AttemptValues,
  type EncodedRecord,
  type RequestValues,
} from './encoded-record.js';
import { addToRollups, rollupsOf, type AttemptMeasures, type RequestMeasures } from './rollups.js';
import type { UsageDatabase } from './schema.js';

// Bound parameters per statement stay below PostgreSQL's 65 535.
const REQUEST_ROWS_PER_INSERT = 500; // × 24 columns
const ATTEMPT_ROWS_PER_INSERT = 1_000; // × 19 columns

/**
 * Writes a batch and adds what it newly stored to the rollups, in one
 * transaction. `sqlite`: the same connection's better-sqlite3 handle, whose
 * cached prepared statements insert a row in a few microseconds — compiling a
 * kysely INSERT of hundreds of rows and preparing it anew for every batch cost
 * ten times more on the writer's thread, which competes with the request
 * thread for the machine's cores.
 */
export async function writeRecords(db: Kysely<UsageDatabase>, batch: readonly EncodedRecord[] | string, sqlite: BetterSqlite3.Database | undefined): Promise<void> {
  if (batch.length === 0) return;
  const { requests, attempts } = decodeBatch(batch);
  if (requests.length === 0) return;
  await db.transaction().execute(async (tx) => {
    // Only rows stored now count in the rollups: a retried batch whose first try was in fact committed adds nothing.
    const stored = sqlite !== undefined ? insertSqlite(sqlite, requests, attempts) : await insertPostgres(tx, requests, attempts);
    await addToRollups(tx, rollupsOf(stored.requests, stored.attempts), sqlite === undefined);
  });
}

/** What the rows stored now add to the rollups. */
interface Stored {
  readonly requests: RequestMeasures[];
  readonly attempts: AttemptMeasures[];
}

const REQUEST_ID = REQUEST_COLUMNS.indexOf('id');
const ATTEMPT_REQUEST_ID = ATTEMPT_COLUMNS.indexOf('request_row_id');

/** Runs inside the transaction kysely opened on this same connection (its mutex keeps other queries out). */
function insertSqlite(database: BetterSqlite3.Database, requests: RequestValues[], attempts: AttemptValues[]): Stored {
  const { insertRequest, insertAttempt } = statementsOf(database);
  const storedIds = new Set<string>();
  const stored: Stored = { requests: [], attempts: [] };
  for (const values of requests) {
    if (insertRequest.run(values).changes === 0) continue;
    storedIds.add(values[REQUEST_ID] as string);
    stored.requests.push(requestMeasuresOf(values));
  }
  for (const values of attempts) {
    if (!storedIds.has(values[ATTEMPT_REQUEST_ID] as string)) continue;
    insertAttempt.run(values);
    stored.attempts.push(attemptMeasuresOf(values));
  }
  return stored;
}

async function insertPostgres(tx: Transaction<UsageDatabase>, requestValues: RequestValues[], attemptValues: AttemptValues[]): Promise<Stored> {
  const requests = requestValues.map(requestRowOf);
  const attempts = attemptValues.map(attemptRowOf);
  const storedIds = new Set<string>();
  for (let i = 0; i < requests.length; i += REQUEST_ROWS_PER_INSERT) {
    const inserted = await tx
      .insertInto('usage_requests')
      .values(requests.slice(i, i + REQUEST_ROWS_PER_INSERT))
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .execute();
    for (const { id } of inserted) storedIds.add(id);
  }
  const stored = { requests: requests.filter((r) => storedIds.has(r.id)), attempts: attempts.filter((a) => storedIds.has(a.request_row_id)) };
  for (let i = 0; i < stored.attempts.length; i += ATTEMPT_ROWS_PER_INSERT) {
    await tx
      .insertInto('usage_attempts')
      .values(stored.attempts.slice(i, i + ATTEMPT_ROWS_PER_INSERT))
      .onConflict((oc) => oc.columns(['request_row_id', 'position']).doNothing())
      .execute();
  }
  return stored;
}

const statements = new WeakMap<BetterSqlite3.Database, { insertRequest: BetterSqlite3.Statement; insertAttempt: BetterSqlite3.Statement }>();

function statementsOf(database: BetterSqlite3.Database): { insertRequest: BetterSqlite3.Statement; insertAttempt: BetterSqlite3.Statement } {
  let s = statements.get(database);
  if (s === undefined) {
    const insert = (table: string, columns: readonly string[], conflict: string) =>
      database.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ON CONFLICT (${conflict}) DO NOTHING`);
    s = {
      insertRequest: insert('usage_requests', REQUEST_COLUMNS, 'id'),
      insertAttempt: insert('usage_attempts', ATTEMPT_COLUMNS, 'request_row_id, position'),
    };
    statements.set(database, s);
  }
  return s;
}
