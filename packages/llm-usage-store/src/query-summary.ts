/**
 * Totals per alias, target or provider over a time window.
 *
 * By alias the unit is the request (usage_requests). By target or provider the
 * unit is the upstream call (usage_attempts): a call that failed over counts as
 * an error of its target but not as a request, so a rescued request counts once.
 * Percentiles are nearest-rank, computed with window functions that SQLite and
 * PostgreSQL share (row_number / count over a partition).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { UsageDatabase } from './schema.js';
import type { SummaryGroup, SummaryQuery, SummaryRow } from './types.js';
import { UsageQueryError } from './usage-query-error.js';

export const SUMMARY_GROUPS: readonly SummaryGroup[] = ['alias', 'target', 'provider'];

interface Totals {
  key: string | null;
  requests: number;
  errors: number;
  rescued: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number | null;
}

interface Percentiles {
  key: string | null;
  p50: number | null;
  p95: number | null;
}

export async function querySummary(db: Kysely<UsageDatabase>, query: SummaryQuery): Promise<SummaryRow[]> {
  const { since, until, groupBy } = query;
  if (since !== undefined && until !== undefined && since > until) {
    throw new UsageQueryError('since must not be after until.', 'since');
  }
  if (!SUMMARY_GROUPS.includes(groupBy)) {
    throw new UsageQueryError(`group_by must be one of ${SUMMARY_GROUPS.join(', ')}.`, 'group_by');
  }
  const table = groupBy === 'alias' ? 'usage_requests' : 'usage_attempts';
  const key = sql.ref(groupBy);
  const window = timeWindow(since, until);

  const totals =
    groupBy === 'alias'
      ? sql<Totals>`SELECT ${key} AS key, count(*) AS requests,
          sum(CASE WHEN status >= 400 THEN 1 ELSE 0 END) + sum(failovers) AS errors,
          sum(rescued) AS rescued,
          sum(coalesce(prompt_tokens, 0)) AS prompt_tokens, sum(coalesce(completion_tokens, 0)) AS completion_tokens,
          sum(cost_usd) AS cost_usd
        FROM usage_requests WHERE ${window} GROUP BY ${key}`
      : sql<Totals>`SELECT ${key} AS key, sum(final) AS requests,
          sum(CASE WHEN outcome <> 'ok' THEN 1 ELSE 0 END) AS errors,
          sum(rescue) AS rescued,
          sum(coalesce(prompt_tokens, 0)) AS prompt_tokens, sum(coalesce(completion_tokens, 0)) AS completion_tokens,
          sum(cost_usd) AS cost_usd
        FROM usage_attempts WHERE ${window} GROUP BY ${key}`;

  const [totalRows, durations, ttfbs] = await Promise.all([
    totals.execute(db),
    percentiles(table, key, sql.ref('duration_ms'), window).execute(db),
    percentiles(table, key, sql.ref('ttfb_ms'), window).execute(db),
  ]);
  const durationBy = new Map(durations.rows.map((r) => [r.key, r]));
  const ttfbBy = new Map(ttfbs.rows.map((r) => [r.key, r]));
  return totalRows.rows
    .map((row): SummaryRow => ({
      key: row.key,
      requests: Number(row.requests),
      errors: Number(row.errors),
      rescued: Number(row.rescued),
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
      costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
      durationMs: pair(durationBy.get(row.key)),
      ttfbMs: pair(ttfbBy.get(row.key)),
    }))
    .sort((a, b) => b.requests - a.requests || String(a.key).localeCompare(String(b.key)));
}

function timeWindow(since: number | undefined, until: number | undefined): RawBuilder<unknown> {
  const lower = since === undefined ? sql`1 = 1` : sql`ts >= ${since}`;
  const upper = until === undefined ? sql`1 = 1` : sql`ts < ${until}`;
  return sql`${lower} AND ${upper}`;
}

function percentiles(
  table: 'usage_requests' | 'usage_attempts',
  key: RawBuilder<unknown>,
  value: RawBuilder<unknown>,
  window: RawBuilder<unknown>,
): RawBuilder<Percentiles> {
  // Nearest rank: the value at position ceil(p/100 × n), in integer arithmetic.
  return sql<Percentiles>`WITH ranked AS (
      SELECT ${key} AS key, ${value} AS v,
        row_number() OVER (PARTITION BY ${key} ORDER BY ${value}) AS rn,
        count(*) OVER (PARTITION BY ${key}) AS n
      FROM ${sql.table(table)} WHERE ${window} AND ${value} IS NOT NULL)
    SELECT key,
      max(CASE WHEN rn = (n * 50 + 99) / 100 THEN v END) AS p50,
      max(CASE WHEN rn = (n * 95 + 99) / 100 THEN v END) AS p95
    FROM ranked GROUP BY key`;
}

function pair(row: Percentiles | undefined): { p50: number | null; p95: number | null } {
  return {
    p50: row?.p50 === null || row?.p50 === undefined ? null : Number(row.p50),
    p95: row?.p95 === null || row?.p95 === undefined ? null : Number(row.p95),
  };
}
