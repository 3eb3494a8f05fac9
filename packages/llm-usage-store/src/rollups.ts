/**
 * Rollups: per minute, hour and day (UTC), for each alias, key, target and provider, the
 * sums a summary needs (requests, errors, rescued, tokens, cost) and log-scale
 * histograms of duration and time to first byte. They are added to in the same
 * transaction as the rows they count, so a summary reads whole days, hours and
 * minutes from here and raw rows only for the ragged edges of its window.
 *
 * The counting rules are the summary's (see query-summary.ts): by alias the
 * unit is the request, by key too (the key's id), by target or provider the
 * attempt (upstream call).
 *
 * Several writers (replicas on one PostgreSQL) may add to the same rollup row:
 * each transaction first makes sure its rows exist, then reads them FOR UPDATE,
 * adds its part and writes them back, so no addition is lost.
 */
import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import { addHistogram, binOf, decodeHistogram, emptyHistogram, encodeHistogram, type Histogram } from './histogram.js';
import type { UsageAttemptsTable, UsageDatabase, UsageRequestsTable, UsageRollupsTable } from './schema.js';
import type { SummaryGroup } from './types.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** Largest first: a window is covered by whole days, then hours, then minutes (query-summary.ts). */
export const ROLLUP_SPANS = [DAY_MS, HOUR_MS, MINUTE_MS] as const;
/** The rollup key of rows without an alias or caller (rejected before routing, a direct model, auth off): aliases and key ids are never empty. */
export const NO_KEY = '';

/** The groups whose unit is the request, with the column each groups by; the others (target, provider) count attempts. */
export const REQUEST_GROUPS = { alias: 'alias', key: 'key_id' } as const satisfies Partial<Record<SummaryGroup, keyof UsageRequestsTable>>;
export type RequestGroup = keyof typeof REQUEST_GROUPS;

export function isRequestGroup(group: SummaryGroup): group is RequestGroup {
  return Object.hasOwn(REQUEST_GROUPS, group);
}

/** The measures of one group over some rows, before and after storage. */
export interface Tally {
  requests: number;
  errors: number;
  rescued: number;
  promptTokens: number;
  completionTokens: number;
  /** Sum of known costs; null while no row had one. */
  costUsd: number | null;
  durations: Histogram;
  ttfbs: Histogram;
}

export function emptyTally(): Tally {
  return { requests: 0, errors: 0, rescued: 0, promptTokens: 0, completionTokens: 0, costUsd: null, durations: emptyHistogram(), ttfbs: emptyHistogram() };
}

export function addTally(into: Tally, from: Tally): void {
  into.requests += from.requests;
  into.errors += from.errors;
  into.rescued += from.rescued;
  into.promptTokens += from.promptTokens;
  into.completionTokens += from.completionTokens;
  if (from.costUsd !== null) into.costUsd = (into.costUsd ?? 0) + from.costUsd;
  addHistogram(into.durations, from.durations);
  addHistogram(into.ttfbs, from.ttfbs);
}

export type RequestMeasures = Pick<
  Selectable<UsageRequestsTable>,
  'ts' | 'alias' | 'key_id' | 'status' | 'failovers' | 'rescued' | 'prompt_tokens' | 'completion_tokens' | 'cost_usd' | 'duration_ms' | 'ttfb_ms'
>;
export type AttemptMeasures = Pick<
  Selectable<UsageAttemptsTable>,
  'ts' | 'target' | 'provider' | 'final' | 'outcome' | 'rescue' | 'prompt_tokens' | 'completion_tokens' | 'cost_usd' | 'duration_ms' | 'ttfb_ms'
>;

/** A row's duration and time-to-first-byte bins (-1: none), computed once for all the tallies it adds to. */
type Bins = readonly [number, number];

function binsOf(row: RequestMeasures | AttemptMeasures): Bins {
  return [row.duration_ms === null ? -1 : binOf(Number(row.duration_ms)), row.ttfb_ms === null ? -1 : binOf(Number(row.ttfb_ms))];
}

/** Adds one request row to its alias's (or key's) tally. */
export function countRequest(t: Tally, r: RequestMeasures, bins: Bins = binsOf(r)): void {
  t.requests += 1;
  t.errors += (r.status >= 400 ? 1 : 0) + Number(r.failovers);
  t.rescued += Number(r.rescued);
  count(t, r, bins);
}

/** Adds one attempt to its target's (or provider's) tally. */
export function countAttempt(t: Tally, a: AttemptMeasures, bins: Bins = binsOf(a)): void {
  t.requests += Number(a.final);
  // A call the router cancelled itself (a hedge race's loser) is no error of its target.
  t.errors += a.outcome === 'ok' || a.outcome === 'cancelled' ? 0 : 1;
  t.rescued += Number(a.rescue);
  count(t, a, bins);
}

function count(t: Tally, row: RequestMeasures | AttemptMeasures, [duration, ttfb]: Bins): void {
  t.promptTokens += Number(row.prompt_tokens ?? 0);
  t.completionTokens += Number(row.completion_tokens ?? 0);
  if (row.cost_usd !== null) t.costUsd = (t.costUsd ?? 0) + Number(row.cost_usd);
  if (duration >= 0) t.durations[duration]! += 1;
  if (ttfb >= 0) t.ttfbs[ttfb]! += 1;
}

interface RollupKey {
  readonly dim: SummaryGroup;
  readonly span: number;
  readonly bucket: number;
  readonly key: string;
}

type RollupEntry = RollupKey & { tally: Tally };

/** A rollup row's primary key as one map key. */
function rollupId(dim: string, span: number, bucket: number, key: string): string {
  return `${dim}\u0000${span}\u0000${bucket}\u0000${key}`;
}

/**
 * Collects what newly stored rows add to the rollup rows, one row at a time
 * (the writer adds each row as it is inserted, so no per-row objects pile up
 * for the garbage collector). Keeps no reference to the measures it is given.
 */
export class RollupsBuilder {
  readonly entries = new Map<string, RollupEntry>();
  // Rows arrive in time order: each group's current minute (and its hour and
  // day) are kept at hand, so a row costs one lookup per group, not per rollup.
  private readonly current: Record<SummaryGroup, Map<string, { minute: number; tallies: Tally[] }>> = {
    alias: new Map(),
    key: new Map(),
    target: new Map(),
    provider: new Map(),
  };

  addRequest(r: RequestMeasures): void {
    const bins = binsOf(r);
    for (const t of this.tallies('alias', Number(r.ts), r.alias ?? NO_KEY)) countRequest(t, r, bins);
    // Rows from before migration 0016 have no key_id column at all (the 0004 backfill): undefined counts as no key.
    for (const t of this.tallies('key', Number(r.ts), r.key_id ?? NO_KEY)) countRequest(t, r, bins);
  }

  addAttempt(a: AttemptMeasures): void {
    const bins = binsOf(a);
    for (const t of this.tallies('target', Number(a.ts), a.target)) countAttempt(t, a, bins);
    for (const t of this.tallies('provider', Number(a.ts), a.provider)) countAttempt(t, a, bins);
  }

  private tallies(dim: SummaryGroup, ts: number, key: string): Tally[] {
    const minute = ts - (ts % MINUTE_MS);
    const current = this.current[dim];
    let c = current.get(key);
    if (c === undefined || c.minute !== minute) {
      c = { minute, tallies: ROLLUP_SPANS.map((span) => this.entry(dim, span, ts - (ts % span), key).tally) };
      current.set(key, c);
    }
    return c.tallies;
  }

  private entry(dim: SummaryGroup, span: number, bucket: number, key: string): RollupEntry {
    const id = rollupId(dim, span, bucket, key);
    let e = this.entries.get(id);
    if (e === undefined) this.entries.set(id, (e = { dim, span, bucket, key, tally: emptyTally() }));
    return e;
  }
}

const ROLLUP_ROWS_PER_STATEMENT = 1_000; // × 12 columns: well below both engines' parameter limits

/** Adds `rollups` to the stored ones, inside the caller's transaction. */
export async function addToRollups(
  tx: Transaction<UsageDatabase> | Kysely<UsageDatabase>,
  rollups: Map<string, RollupEntry>,
  /** Lock the rows read (PostgreSQL, where other replicas may add to them at the same time). */
  lockRows: boolean,
): Promise<void> {
  if (rollups.size === 0) return;
  // One order for every writer, so two transactions never wait on each other's rows crosswise.
  const entries = [...rollups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
  if (lockRows) {
    // Rows must exist to be locked: another replica may be about to create the same ones.
    // (Unlocked callers hold the database's only write lock already: SQLite, or a migration.)
    for (let i = 0; i < entries.length; i += ROLLUP_ROWS_PER_STATEMENT) {
      await tx
        .insertInto('usage_rollups')
        .values(entries.slice(i, i + ROLLUP_ROWS_PER_STATEMENT).map((e) => rowOf(e, emptyTally())))
        .onConflict((oc) => oc.columns(['dim', 'span_ms', 'bucket', 'key']).doNothing())
        .execute();
    }
  }
  // One read: per dimension and span, the range of buckets along the primary key (dim, span_ms, bucket, key).
  const ranges = new Map<string, { dim: string; span: number; from: number; to: number }>();
  for (const e of entries) {
    const id = `${e.dim}\u0000${e.span}`;
    const r = ranges.get(id);
    if (r === undefined) {
      ranges.set(id, { dim: e.dim, span: e.span, from: e.bucket, to: e.bucket });
    } else {
      r.from = Math.min(r.from, e.bucket);
      r.to = Math.max(r.to, e.bucket);
    }
  }
  let q = tx
    .selectFrom('usage_rollups')
    .selectAll()
    .where((eb) =>
      eb.or([...ranges.values()].map((r) => eb.and([eb('dim', '=', r.dim), eb('span_ms', '=', r.span), eb('bucket', '>=', r.from), eb('bucket', '<=', r.to)]))),
    );
  if (lockRows) q = q.forUpdate();
  const stored = new Map<string, Selectable<UsageRollupsTable>>();
  for (const row of await q.execute()) stored.set(rollupId(row.dim, row.span_ms, Number(row.bucket), row.key), row);
  const merged = entries.map((e) => {
    const tally = emptyTally();
    const row = stored.get(rollupId(e.dim, e.span, e.bucket, e.key));
    if (row !== undefined) addStoredRollup(tally, row);
    addTally(tally, e.tally);
    return rowOf(e, tally);
  });
  for (let i = 0; i < merged.length; i += ROLLUP_ROWS_PER_STATEMENT) {
    await tx
      .insertInto('usage_rollups')
      .values(merged.slice(i, i + ROLLUP_ROWS_PER_STATEMENT))
      .onConflict((oc) =>
        oc.columns(['dim', 'span_ms', 'bucket', 'key']).doUpdateSet({
          requests: sql`excluded.requests`,
          errors: sql`excluded.errors`,
          rescued: sql`excluded.rescued`,
          prompt_tokens: sql`excluded.prompt_tokens`,
          completion_tokens: sql`excluded.completion_tokens`,
          cost_usd: sql`excluded.cost_usd`,
          durations: sql`excluded.durations`,
          ttfbs: sql`excluded.ttfbs`,
        }),
      )
      .execute();
  }
}

function rowOf(k: RollupKey, t: Tally): Insertable<UsageRollupsTable> {
  return {
    dim: k.dim,
    span_ms: k.span,
    bucket: k.bucket,
    key: k.key,
    requests: t.requests,
    errors: t.errors,
    rescued: t.rescued,
    prompt_tokens: t.promptTokens,
    completion_tokens: t.completionTokens,
    cost_usd: t.costUsd,
    durations: encodeHistogram(t.durations),
    ttfbs: encodeHistogram(t.ttfbs),
  };
}

type StoredRollup = Pick<Selectable<UsageRollupsTable>, 'requests' | 'errors' | 'rescued' | 'prompt_tokens' | 'completion_tokens' | 'cost_usd' | 'durations' | 'ttfbs'>;

/** Adds a stored rollup row to a tally (its histograms decoded straight into the tally's). */
export function addStoredRollup(t: Tally, row: StoredRollup): Tally {
  t.requests += Number(row.requests);
  t.errors += Number(row.errors);
  t.rescued += Number(row.rescued);
  t.promptTokens += Number(row.prompt_tokens);
  t.completionTokens += Number(row.completion_tokens);
  if (row.cost_usd !== null) t.costUsd = (t.costUsd ?? 0) + Number(row.cost_usd);
  decodeHistogram(row.durations, t.durations);
  decodeHistogram(row.ttfbs, t.ttfbs);
  return t;
}

/**
 * Retention: drops the rollups that end at or before `cutoff` (an hour
 * boundary) and rebuilds the day the cutoff falls in from its remaining hours,
 * so that no rollup counts a deleted row. The caller holds writers off the
 * rollups meanwhile (one transaction; on PostgreSQL a table lock).
 */
export async function pruneRollups(tx: Transaction<UsageDatabase>, cutoff: number): Promise<void> {
  for (const span of ROLLUP_SPANS) {
    await tx.deleteFrom('usage_rollups').where('span_ms', '=', span).where('bucket', '<=', cutoff - span).execute();
  }
  const day = cutoff - (cutoff % DAY_MS);
  if (day === cutoff) return;
  const hours = await tx
    .selectFrom('usage_rollups')
    .selectAll()
    .where('span_ms', '=', HOUR_MS)
    .where('bucket', '>=', day)
    .where('bucket', '<', day + DAY_MS)
    .execute();
  await tx.deleteFrom('usage_rollups').where('span_ms', '=', DAY_MS).where('bucket', '=', day).execute();
  const rebuilt = new Map<string, RollupEntry>();
  for (const row of hours) {
    const id = `${row.dim}\u0000${row.key}`;
    let e = rebuilt.get(id);
    if (e === undefined) rebuilt.set(id, (e = { dim: row.dim as SummaryGroup, span: DAY_MS, bucket: day, key: row.key, tally: emptyTally() }));
    addStoredRollup(e.tally, row);
  }
  await addToRollups(tx, rebuilt, false);
}

/**
 * Builds the rollups of rows stored before they existed (migration 0004), one
 * hour of rows at a time. The migrator holds its lock, so nobody else writes.
 * Such rows predate 0013 too: their attempts are all in `usage_attempts`.
 */
export async function backfillRollups(db: Kysely<UsageDatabase>): Promise<void> {
  const range = await db
    .selectFrom('usage_requests')
    .select((eb) => [eb.fn.min('ts').as('first'), eb.fn.max('ts').as('last')])
    .executeTakeFirst();
  if (range?.first == null || range.last == null) return;
  const last = Number(range.last);
  for (let hour = Number(range.first) - (Number(range.first) % HOUR_MS); hour <= last; hour += HOUR_MS) {
    const [requests, attempts] = await Promise.all([
      db.selectFrom('usage_requests').selectAll().where('ts', '>=', hour).where('ts', '<', hour + HOUR_MS).execute(),
      db.selectFrom('usage_attempts').selectAll().where('ts', '>=', hour).where('ts', '<', hour + HOUR_MS).execute(),
    ]);
    const rollups = new RollupsBuilder();
    for (const r of requests) rollups.addRequest(r);
    for (const a of attempts) rollups.addAttempt(a);
    await addToRollups(db, rollups.entries, false);
  }
}

const KEY_BACKFILL_PAGE_ROWS = 5_000;

/**
 * The key rollups of rows stored before requests carried their key (migration
 * 0016): none of those rows has a key, so per minute, hour and day their key
 * rollup (key '') is the sum of that bucket's alias rollups. Any key rollups
 * already there (built by the 0004 backfill from the same rows) are replaced,
 * so nothing counts twice. Read a page at a time along the primary key; a
 * bucket split between pages is added to, not overwritten (`addToRollups`).
 */
export async function backfillKeyRollups(db: Kysely<UsageDatabase>): Promise<void> {
  await db.deleteFrom('usage_rollups').where('dim', '=', 'key').execute();
  let after: { span: number; bucket: number; key: string } | undefined;
  for (;;) {
    let q = db.selectFrom('usage_rollups').selectAll().where('dim', '=', 'alias');
    if (after !== undefined) q = q.where(sql<boolean>`(span_ms, bucket, key) > (${after.span}, ${after.bucket}, ${after.key})`);
    const rows = await q.orderBy('span_ms').orderBy('bucket').orderBy('key').limit(KEY_BACKFILL_PAGE_ROWS).execute();
    if (rows.length === 0) return;
    const sums = new Map<string, RollupEntry>();
    for (const row of rows) {
      const bucket = Number(row.bucket);
      const id = rollupId('key', row.span_ms, bucket, NO_KEY);
      let e = sums.get(id);
      if (e === undefined) sums.set(id, (e = { dim: 'key', span: row.span_ms, bucket, key: NO_KEY, tally: emptyTally() }));
      addStoredRollup(e.tally, row);
    }
    await addToRollups(db, sums, false);
    const last = rows.at(-1)!;
    after = { span: last.span_ms, bucket: Number(last.bucket), key: last.key };
  }
}
