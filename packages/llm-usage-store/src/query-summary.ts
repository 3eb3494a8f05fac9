/**
 * Totals per alias, key, target or provider over a time window.
 *
 * By alias or key (the key's id) the unit is the request (usage_requests). By target or provider the
 * unit is the upstream call (the request's attempts): a call that failed over counts as
 * an error of its target but not as a request, so a rescued request counts once.
 *
 * Whole days, hours and minutes of the window are read from the rollups that
 * the writer keeps (rollups.ts); raw rows only for the ragged edges (less than
 * a minute at each end). A summary therefore reads at most a few hundred rows
 * per group whatever the window: reading every row of a 30-day window over a
 * million stored requests took 1.4–2.5 s. p50/p95 are nearest-rank over log-scale
 * histograms: within ±2.2 % of the exact value (histogram.ts).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isEmpty, percentiles } from './histogram.js';
import { addStoredRollup, countAttempt, countRequest, emptyTally, isRequestGroup, NO_KEY, REQUEST_GROUPS, ROLLUP_SPANS, type Tally } from './rollups.js';
import type { UsageDatabase } from './schema.js';
import { visitAttemptMeasuresWhere } from './stored-attempts.js';
import type { SummaryGroup, SummaryQuery, SummaryRow } from './types.js';
import { UsageQueryError } from './usage-query-error.js';

export const SUMMARY_GROUPS: readonly SummaryGroup[] = ['alias', 'target', 'provider', 'key'];

/** Where each part of a window is read from: rollups of a span length, or raw rows (`span` 0). */
export interface WindowPart {
  readonly span: number;
  readonly from: number;
  readonly to: number;
}

/**
 * Splits [since, until) into whole days, then whole hours and minutes at the
 * edges, and raw rows for what is left (less than a minute at each end).
 */
export function planWindow(since: number, until: number, spans: readonly number[] = ROLLUP_SPANS): WindowPart[] {
  if (!(since < until)) return [];
  const [span, ...smaller] = spans;
  if (span === undefined) return [{ span: 0, from: since, to: until }];
  const from = Number.isFinite(since) ? Math.ceil(since / span) * span : since;
  const to = Number.isFinite(until) ? Math.floor(until / span) * span : until;
  if (!(from < to)) return planWindow(since, until, smaller);
  return [...planWindow(since, from, smaller), { span, from, to }, ...planWindow(to, until, smaller)];
}

export async function querySummary(db: Kysely<UsageDatabase>, query: SummaryQuery): Promise<SummaryRow[]> {
  const { since, until, groupBy } = query;
  if (since !== undefined && until !== undefined && since > until) {
    throw new UsageQueryError('since must not be after until.', 'since');
  }
  if (!SUMMARY_GROUPS.includes(groupBy)) {
    throw new UsageQueryError(`group_by must be one of ${SUMMARY_GROUPS.join(', ')}.`, 'group_by');
  }
  const parts = planWindow(since ?? -Infinity, until ?? Infinity);
  const rollupParts = parts.filter((p) => p.span > 0);
  const rawParts = parts.filter((p) => p.span === 0);
  const tallies = new Map<string, Tally>();
  const tallyOf = (key: string) => {
    let t = tallies.get(key);
    if (t === undefined) tallies.set(key, (t = emptyTally()));
    return t;
  };

  const [rollups] = await Promise.all([
    rollupParts.length === 0
      ? []
      : db
          .selectFrom('usage_rollups')
          .select(['key', 'requests', 'errors', 'rescued', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'durations', 'ttfbs'])
          .where('dim', '=', groupBy)
          .where(sql<boolean>`(${sql.join(rollupParts.map((p) => sql`(span_ms = ${p.span} AND ${window('bucket', p.from, p.to)})`), sql` OR `)})`)
          .execute(),
    rawParts.length === 0 ? undefined : countRawRows(db, groupBy, rawParts, tallyOf),
  ]);
  for (const row of rollups) addStoredRollup(tallyOf(row.key), row);
  return [...tallies]
    .filter(([, t]) => !isEmpty(t.durations)) // every stored row has a duration
    .map(([key, t]): SummaryRow => ({
      key: isRequestGroup(groupBy) && key === NO_KEY ? null : key,
      requests: t.requests,
      errors: t.errors,
      rescued: t.rescued,
      promptTokens: t.promptTokens,
      completionTokens: t.completionTokens,
      costUsd: t.costUsd,
      durationMs: percentiles(t.durations),
      ttfbMs: percentiles(t.ttfbs),
    }))
    .sort((a, b) => b.requests - a.requests || String(a.key).localeCompare(String(b.key)));
}

/** Counts the raw rows of the window's edges (requests by alias or key, attempts by target or provider) into `tallyOf`. */
async function countRawRows(db: Kysely<UsageDatabase>, groupBy: SummaryGroup, parts: WindowPart[], tallyOf: (key: string) => Tally): Promise<void> {
  const inSpans = (column: string) => sql.join(parts.map((p) => sql`(${window(column, p.from, p.to)})`), sql` OR `);
  if (isRequestGroup(groupBy)) {
    const column = REQUEST_GROUPS[groupBy];
    const requests = await db
      .selectFrom('usage_requests')
      .select(['ts', 'alias', 'key_id', 'status', 'failovers', 'rescued', 'prompt_tokens', 'completion_tokens', 'cost_usd', 'duration_ms', 'ttfb_ms'])
      .where(sql<boolean>`(${inSpans('ts')})`)
      .execute();
    for (const r of requests) countRequest(tallyOf(r[column] ?? NO_KEY), r);
    return;
  }
  await visitAttemptMeasuresWhere(db, inSpans, (a) => countAttempt(tallyOf(groupBy === 'target' ? a.target : a.provider), a));
}

function window(column: string, from: number, to: number): RawBuilder<unknown> {
  const lower = Number.isFinite(from) ? sql`${sql.ref(column)} >= ${from}` : sql`1 = 1`;
  const upper = Number.isFinite(to) ? sql`${sql.ref(column)} < ${to}` : sql`1 = 1`;
  return sql`${lower} AND ${upper}`;
}
