/**
 * One batch of request records (and their attempts) written in one transaction.
 * Rows carry ids assigned before the first try, and conflicts are ignored, so
 * retrying a batch whose commit was in fact applied writes nothing twice.
 */
import type { Insertable, Kysely } from 'kysely';
import type { UsageAttemptsTable, UsageDatabase, UsageRequestsTable } from './schema.js';
import type { RequestRecord } from './types.js';

export interface IdentifiedRecord {
  /** Unique row id, assigned when the record is queued. */
  readonly id: string;
  readonly record: RequestRecord;
}

// Bound parameters per statement stay below SQLite's 32 766 and PostgreSQL's 65 535.
const REQUEST_ROWS_PER_INSERT = 500; // × 25 columns
const ATTEMPT_ROWS_PER_INSERT = 1_000; // × 19 columns

export async function writeRecords(db: Kysely<UsageDatabase>, batch: readonly IdentifiedRecord[]): Promise<void> {
  if (batch.length === 0) return;
  const requests: Insertable<UsageRequestsTable>[] = [];
  const attempts: Insertable<UsageAttemptsTable>[] = [];
  for (const { id, record } of batch) {
    const { requestRow, attemptRows } = toRows(id, record);
    requests.push(requestRow);
    for (const row of attemptRows) attempts.push(row);
  }
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < requests.length; i += REQUEST_ROWS_PER_INSERT) {
      await tx
        .insertInto('usage_requests')
        .values(requests.slice(i, i + REQUEST_ROWS_PER_INSERT))
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    }
    for (let i = 0; i < attempts.length; i += ATTEMPT_ROWS_PER_INSERT) {
      await tx
        .insertInto('usage_attempts')
        .values(attempts.slice(i, i + ATTEMPT_ROWS_PER_INSERT))
        .onConflict((oc) => oc.columns(['request_row_id', 'position']).doNothing())
        .execute();
    }
  });
}

function toRows(
  id: string,
  r: RequestRecord,
): { requestRow: Insertable<UsageRequestsTable>; attemptRows: Insertable<UsageAttemptsTable>[] } {
  const failovers = r.attempts.filter((a) => a.failedOver).length;
  const rescued = failovers > 0 && r.status < 400 ? 1 : 0;
  const last = r.attempts.length - 1;
  let failedOverBefore = false;
  const attemptRows = r.attempts.map((a, index): Insertable<UsageAttemptsTable> => {
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
