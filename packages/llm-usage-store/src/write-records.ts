/**
 * One batch of request records (and their attempts) written in one transaction.
 * Rows carry ids assigned before the first try, and conflicts are ignored, so
 * retrying a batch whose commit was in fact applied writes nothing twice.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { addToRollups, rollupsOf } from './rollups.js';
import type { UsageAttemptsTable, UsageDatabase, UsageRequestsTable } from './schema.js';
import type { RequestRecord } from './types.js';

export interface IdentifiedRecord {
  /** Unique row id, assigned when the record is queued. */
  readonly id: string;
  readonly record: RequestRecord;
}

type RequestRow = Selectable<UsageRequestsTable>;
type AttemptRow = Selectable<UsageAttemptsTable>;

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
export async function writeRecords(db: Kysely<UsageDatabase>, batch: readonly IdentifiedRecord[], sqlite: BetterSqlite3.Database | undefined): Promise<void> {
  if (batch.length === 0) return;
  const requests: RequestRow[] = [];
  const attempts: AttemptRow[] = [];
  for (const { id, record } of batch) {
    const { requestRow, attemptRows } = toRows(id, record);
    requests.push(requestRow);
    for (const row of attemptRows) attempts.push(row);
  }
  await db.transaction().execute(async (tx) => {
    // Only rows stored now count in the rollups: a retried batch whose first try was in fact committed adds nothing.
    const stored = sqlite !== undefined ? insertSqlite(sqlite, requests, attempts) : await insertPostgres(tx, requests, attempts);
    await addToRollups(tx, rollupsOf(stored.requests, stored.attempts), sqlite === undefined);
  });
}

interface Stored {
  readonly requests: RequestRow[];
  readonly attempts: AttemptRow[];
}

/** Runs inside the transaction kysely opened on this same connection (its mutex keeps other queries out). */
function insertSqlite(database: BetterSqlite3.Database, requests: RequestRow[], attempts: AttemptRow[]): Stored {
  const { insertRequest, insertAttempt } = statementsOf(database);
  const storedIds = new Set<string>();
  const stored: Stored = { requests: [], attempts: [] };
  for (const row of requests) {
    if (insertRequest.run(REQUEST_COLUMNS.map((c) => row[c])).changes === 0) continue;
    storedIds.add(row.id);
    stored.requests.push(row);
  }
  for (const row of attempts) {
    if (!storedIds.has(row.request_row_id)) continue;
    insertAttempt.run(ATTEMPT_COLUMNS.map((c) => row[c]));
    stored.attempts.push(row);
  }
  return stored;
}

async function insertPostgres(tx: Transaction<UsageDatabase>, requests: RequestRow[], attempts: AttemptRow[]): Promise<Stored> {
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
  const stored: Stored = { requests: requests.filter((r) => storedIds.has(r.id)), attempts: attempts.filter((a) => storedIds.has(a.request_row_id)) };
  for (let i = 0; i < stored.attempts.length; i += ATTEMPT_ROWS_PER_INSERT) {
    await tx
      .insertInto('usage_attempts')
      .values(stored.attempts.slice(i, i + ATTEMPT_ROWS_PER_INSERT))
      .onConflict((oc) => oc.columns(['request_row_id', 'position']).doNothing())
      .execute();
  }
  return stored;
}

const REQUEST_COLUMNS = [
  'id', 'request_id', 'ts', 'key_fingerprint', 'alias', 'model', 'target', 'provider', 'status', 'code', 'stream', 'priority',
  'attempt_count', 'plan', 'duration_ms', 'ttfb_ms', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd',
  'failovers', 'rescued', 'flagged', 'replica',
] as const satisfies readonly (keyof UsageRequestsTable)[];
const ATTEMPT_COLUMNS = [
  'request_row_id', 'position', 'ts', 'alias', 'target', 'provider', 'model', 'outcome', 'reason', 'upstream_status',
  'duration_ms', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost_usd', 'failed_over', 'final', 'rescue', 'ttfb_ms',
] as const satisfies readonly (keyof UsageAttemptsTable)[];

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

function toRows(
  id: string,
  r: RequestRecord,
): { requestRow: RequestRow; attemptRows: AttemptRow[] } {
  const failovers = r.attempts.filter((a) => a.failedOver).length;
  const rescued = failovers > 0 && r.status < 400 ? 1 : 0;
  const last = r.attempts.length - 1;
  let failedOverBefore = false;
  const attemptRows = r.attempts.map((a, index): AttemptRow => {
    const rescue = a.outcome === 'ok' && failedOverBefore ? 1 : 0;
    if (a.failedOver) failedOverBefore = true;
    return {
      request_row_id: id,
      position: a.position,
      ts: r.time,
      alias: r.alias,
      target: a.target,
      provider: a.provider,
      model: a.model,
      outcome: a.outcome,
      reason: a.reason,
      upstream_status: a.upstreamStatus,
      duration_ms: a.durationMs,
      prompt_tokens: a.promptTokens,
      completion_tokens: a.completionTokens,
      cached_tokens: a.cachedTokens,
      cost_usd: a.costUsd,
      failed_over: a.failedOver ? 1 : 0,
      final: index === last && !a.failedOver ? 1 : 0,
      rescue,
      ttfb_ms: index === last ? r.ttfbMs : null,
    };
  });
  return {
    requestRow: {
      id,
      request_id: r.requestId,
      ts: r.time,
      key_fingerprint: r.keyFingerprint,
      alias: r.alias,
      model: r.model,
      target: r.target,
      provider: r.provider,
      status: r.status,
      code: r.code,
      stream: r.stream ? 1 : 0,
      priority: r.priority,
      attempt_count: r.attemptCount,
      plan: JSON.stringify(r.plan),
      duration_ms: r.durationMs,
      ttfb_ms: r.ttfbMs,
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
      cached_tokens: r.cachedTokens,
      cost_usd: r.costUsd,
      failovers,
      rescued,
      flagged: r.status >= 400 || failovers > 0 ? 1 : 0,
      replica: r.replica,
    },
    attemptRows,
  };
}
