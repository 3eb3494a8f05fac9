/**
 * Overview: every provider's status, and for a chosen window the traffic
 * (requests, errors, rescued, tokens, cost), latency per alias or per key,
 * and charts of requests and errors over time per alias or per key (see
 * breakdowns.ts). Refreshes itself every 5 s.
 */
import { useMemo, useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { BREAKDOWNS, breakdownByGroup } from '../breakdowns.js';
import { WindowSelect, windowById } from '../components/window-select.js';
import { ErrorNote, ProviderStatus } from '../components/status.js';
import { TimeChart } from '../components/time-chart.js';
import { formatInt, formatMs, formatTime, formatUsd } from '../format.js';
import { useKeyNames } from '../keys.js';
import type { HealthAnswer, Summary } from '../types.js';
import { usageSeries } from '../usage-series.js';
import { usePoll, type Polled } from '../use-poll.js';

export const LIVE_REFRESH_MS = 5_000; // 5 s: health and overview figures

function Tile({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <div class="tile">
      <dt>{label}</dt>
      <dd>
        {value}
        {hint !== undefined && <span class="tile-hint">{hint}</span>}
      </dd>
    </div>
  );
}

export function OverviewPage({ health }: { health: Polled<HealthAnswer> }) {
  const [windowId, setWindowId] = useState('1h');
  const window = windowById(windowId);
  const [group, setGroup] = useState('alias');
  const breakdown = breakdownByGroup(group);
  const keys = useKeyNames();
  const summary = usePoll(
    (signal) => get<Summary>(`/admin/usage/summary${query({ group_by: breakdown.group, since: Date.now() - window.spanMs })}`, signal),
    LIVE_REFRESH_MS,
    [window.id, breakdown.group],
  );
  const series = usePoll((signal) => usageSeries(window, breakdown, signal), LIVE_REFRESH_MS, [window.id, breakdown.group]);

  const totals = useMemo(() => {
    const rows = summary.data?.data ?? [];
    const costs = rows.map((r) => r.cost_usd).filter((c): c is number => c !== null);
    return {
      requests: rows.reduce((n, r) => n + r.requests, 0),
      errors: rows.reduce((n, r) => n + r.errors, 0),
      rescued: rows.reduce((n, r) => n + r.rescued, 0),
      tokens: rows.reduce((n, r) => n + r.prompt_tokens + r.completion_tokens, 0),
      cost: costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0),
    };
  }, [summary.data]);

  // Right after a change of breakdown the shown answers are still of the old one: its rows would
  // read under the new heading (an alias as "(no key)"), so they wait for the new answer. The
  // totals are the same under either breakdown and stay.
  const rows = summary.data?.group_by === breakdown.group ? summary.data.data : undefined;

  const chartSeries = useMemo(() => {
    const s = series.data;
    if (s === undefined || s.group !== breakdown.group) return undefined;
    const of = (map: Map<string | null, number[]>) => [...map.entries()].map(([id, values]) => ({ label: breakdown.labelOf(id, keys), values }));
    return { times: s.times, requests: of(s.requests), errors: of(s.errors) };
  }, [series.data, breakdown, keys]);

  const h = health.data;
  return (
    <section aria-labelledby="overview-title">
      <h1 id="overview-title">Overview</h1>
      <section aria-labelledby="providers-status-title" class="card">
        <h2 id="providers-status-title">
          Providers{' '}
          {h !== undefined && (
            <span class={`overall overall-${h.status}`}>
              gateway {h.status}
            </span>
          )}
        </h2>
        <ErrorNote error={health.error} />
        {h !== undefined && (
          <ul class="provider-list" aria-live="polite">
            {h.providers.map((p) => (
              <li key={p.provider} data-provider={p.provider}>
                <span class="provider-name">{p.provider}</span> <ProviderStatus health={p} />
              </li>
            ))}
          </ul>
        )}
        {h !== undefined && <p class="muted small">Checked {formatTime(h.checked_at)} · refreshes every {LIVE_REFRESH_MS / 1000} s</p>}
      </section>

      <section aria-labelledby="traffic-title" class="card">
        <div class="card-head">
          <h2 id="traffic-title">Traffic</h2>
          <WindowSelect value={window.id} onChange={setWindowId} />
          <label class="inline-field">
            Break down by{' '}
            <select value={breakdown.group} onChange={(e) => setGroup((e.target as HTMLSelectElement).value)}>
              {BREAKDOWNS.map((b) => (
                <option key={b.group} value={b.group}>
                  {b.label}
                </option>
              ))}
            </select>
          </label>
        </div>
        <ErrorNote error={summary.error} />
        <dl class="tiles" aria-live="polite">
          <Tile label="Requests" value={formatInt(totals.requests)} />
          <Tile label="Errors" value={formatInt(totals.errors)} hint="failed requests and failed-over attempts" />
          <Tile label="Rescued by failover" value={formatInt(totals.rescued)} />
          <Tile label="Tokens" value={formatInt(totals.tokens)} />
          <Tile label="Cost" value={formatUsd(totals.cost)} />
        </dl>
        {rows !== undefined && rows.length > 0 && (
          <div class="table-wrap">
            <table>
              <caption>Per {breakdown.label}, last {window.label}</caption>
              <thead>
                <tr>
                  <th scope="col">{breakdown.heading}</th>
                  <th scope="col" class="num">Requests</th>
                  <th scope="col" class="num">Errors</th>
                  <th scope="col" class="num">Rescued</th>
                  <th scope="col" class="num">Tokens</th>
                  <th scope="col" class="num">Cost</th>
                  <th scope="col" class="num">p50</th>
                  <th scope="col" class="num">p95</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={breakdown.rowId(r) ?? ''}>
                    <th scope="row" class="break">
                      {breakdown.labelOf(breakdown.rowId(r), keys)}
                    </th>
                    <td class="num">{formatInt(r.requests)}</td>
                    <td class="num">{formatInt(r.errors)}</td>
                    <td class="num">{formatInt(r.rescued)}</td>
                    <td class="num">{formatInt(r.prompt_tokens + r.completion_tokens)}</td>
                    <td class="num">{formatUsd(r.cost_usd)}</td>
                    <td class="num">{formatMs(r.duration_ms.p50)}</td>
                    <td class="num">{formatMs(r.duration_ms.p95)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {rows !== undefined && rows.length === 0 && <p class="muted">No requests in the last {window.label}.</p>}
        <ErrorNote error={series.error} />
        {chartSeries !== undefined && (
          <div class="charts">
            <TimeChart title={`Requests per ${breakdown.label}, last ${window.label}`} times={chartSeries.times} series={chartSeries.requests} />
            <TimeChart title={`Errors per ${breakdown.label}, last ${window.label}`} times={chartSeries.times} series={chartSeries.errors} />
          </div>
        )}
      </section>
    </section>
  );
}
