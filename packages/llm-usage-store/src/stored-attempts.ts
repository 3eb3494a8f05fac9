/**
 * A request's attempts are stored in its own row (`usage_requests.attempts`,
 * JSON, see `StoredAttempt`) since migration 0013.
 *
 * Why not a row per attempt any more: nearly every request makes one upstream
 * call, and its attempt row cost as much to write as the request row (three
 * more b-trees: the table, its primary key and its time index). Nothing looks
 * attempts up by themselves: the requests view shows them with their request,
 * and summaries by target or provider read whole minutes from the rollups and
 * only the seconds at a window's edges from rows.
 *
 * Rows written before 0013 keep their attempts in `usage_attempts`
 * (`attempts` is null on them); the readers here serve both until retention
 * has removed the older ones.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ItemCells } from './column-kinds.js';
import { ATTEMPT_LIST } from './request-columns.js';
import type { AttemptMeasures } from './rollups.js';
import type { UsageDatabase } from './schema.js';
import type { AttemptRecord } from './types.js';

type AttemptFields = (typeof ATTEMPT_LIST)['fields'];

/**
 * The stored form, one value list per attempt, its values in `ATTEMPT_LIST`'s
 * field order (its position is its index; record-block.ts writes it). Lists,
 * not objects: a third of the bytes, and the column is written for every
 * request while being read only a page or a window's edges at a time.
 */
export type StoredAttempt = { -readonly [I in keyof AttemptFields]: StoredValueOf<AttemptFields[I]> };
type StoredValueOf<F> = F extends { readonly kind: infer K extends keyof ItemCells; readonly nullable: infer N } ? ItemCells[K] | (N extends true ? null : never) : never;

/** Each field's place in a `StoredAttempt`. */
const AT = Object.fromEntries(ATTEMPT_LIST.fields.map((f, i) => [f.field, i])) as {
  readonly [I in keyof AttemptFields & `${number}` as AttemptFields[I]['field']]: I extends `${infer N extends number}` ? N : never;
};

export function decodeAttempts(text: string): AttemptRecord[] {
  return (JSON.parse(text) as StoredAttempt[]).map((values, position) => {
    const attempt: Record<string, unknown> = { position };
    ATTEMPT_LIST.fields.forEach((f, i) => (attempt[f.field] = f.kind === 'boolean' ? values[i] === 1 : values[i]));
    // One field per declared field: `ATTEMPT_LIST` satisfies `ListColumn<AttemptRecord>`.
    return attempt as unknown as AttemptRecord;
  });
}

/** One object, refilled for every attempt visited: consumers read it and keep nothing (see `RollupsBuilder`). */
const visited: AttemptMeasures = {
  ts: 0, target: '', provider: '', final: 0, outcome: '', rescue: 0,
  prompt_tokens: null, completion_tokens: null, cost_usd: null, duration_ms: 0, ttfb_ms: null,
};

/**
 * Visits what each attempt of a request (its `attempts` column's text) adds
 * to the target and provider rollups. `final`: the request ended with it (it
 * counts as the request for its target); `rescue`: it answered after an
 * earlier one failed over; the request's time to first byte belongs to its
 * last attempt. `visit` must not keep the object it is given.
 */
export function visitAttemptMeasures(ts: number, ttfbMs: number | null, attemptsText: string, visit: (a: AttemptMeasures) => void): void {
  visitStoredAttempts(ts, ttfbMs, JSON.parse(attemptsText) as StoredAttempt[], visit);
}

/** `visitAttemptMeasures` of attempts already in their stored form (the writer has them before the text). */
export function visitStoredAttempts(ts: number, ttfbMs: number | null, attempts: readonly StoredAttempt[], visit: (a: AttemptMeasures) => void): void {
  const last = attempts.length - 1;
  let failedOverBefore = false;
  for (let i = 0; i <= last; i++) {
    const attempt = attempts[i];
    if (attempt === undefined) break;
    const failedOver = attempt[AT.failedOver];
    visited.ts = ts;
    visited.target = attempt[AT.target];
    visited.provider = attempt[AT.provider];
    visited.final = i === last && failedOver === 0 ? 1 : 0;
    visited.outcome = attempt[AT.outcome];
    visited.rescue = attempt[AT.outcome] === 'ok' && failedOverBefore ? 1 : 0;
    visited.prompt_tokens = attempt[AT.promptTokens];
    visited.completion_tokens = attempt[AT.completionTokens];
    visited.cost_usd = attempt[AT.costUsd];
    visited.duration_ms = attempt[AT.durationMs];
    visited.ttfb_ms = i === last ? ttfbMs : null;
    visit(visited);
    if (failedOver === 1) failedOverBefore = true;
  }
}

/**
 * Visits the attempt measures of the requests whose time satisfies
 * `inWindow` (a condition on a `ts` column): those stored in their request's
 * row and those in `usage_attempts` from before migration 0013.
 */
export async function visitAttemptMeasuresWhere(
  db: Kysely<UsageDatabase>,
  inWindow: (column: string) => RawBuilder<unknown>,
  visit: (a: AttemptMeasures) => void,
): Promise<void> {
  const [rows, legacy] = await Promise.all([
    db
      .selectFrom('usage_requests')
      .select(['ts', 'ttfb_ms', 'attempts'])
      .where(sql<boolean>`(${inWindow('ts')})`)
      .where('attempts', 'is not', null)
      .execute(),
    db
      .selectFrom('usage_attempts')
      .select(['ts', 'target', 'provider', 'final', 'outcome', 'rescue', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'duration_ms', 'ttfb_ms'])
      .where(sql<boolean>`(${inWindow('ts')})`)
      .execute(),
  ]);
  for (const a of legacy) visit(a);
  for (const row of rows) visitAttemptMeasures(Number(row.ts), row.ttfb_ms, row.attempts!, visit);
}

/** The attempts of the given request rows, in order: from the row itself, else (rows from before 0013) from `usage_attempts`. */
export async function attemptsOfRows(
  db: Kysely<UsageDatabase>,
  rows: readonly { readonly id: string; readonly attempts: string | null }[],
): Promise<Map<string, AttemptRecord[]>> {
  const byRequest = new Map<string, AttemptRecord[]>();
  const legacyIds: string[] = [];
  for (const row of rows) {
    if (row.attempts === null) legacyIds.push(row.id);
    else byRequest.set(row.id, decodeAttempts(row.attempts));
  }
  if (legacyIds.length === 0) return byRequest;
  const legacy = await db
    .selectFrom('usage_attempts')
    .selectAll()
    .where('request_row_id', 'in', legacyIds)
    .orderBy('request_row_id')
    .orderBy('position')
    .execute();
  for (const row of legacy) {
    let list = byRequest.get(row.request_row_id);
    if (list === undefined) byRequest.set(row.request_row_id, (list = []));
    list.push({
      position: Number(row.position),
      target: row.target,
      provider: row.provider,
      model: row.model,
      outcome: row.outcome,
      reason: row.reason,
      upstreamStatus: row.upstream_status,
      durationMs: Number(row.duration_ms),
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      cachedTokens: row.cached_tokens,
      costUsd: row.cost_usd,
      failedOver: row.failed_over === 1,
    });
  }
  return byRequest;
}
