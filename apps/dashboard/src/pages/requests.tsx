/**
 * Requests: the recent requests, newest first, each with the key that made
 * it, filterable by alias, key, status and failed-over; a row expands to its
 * attempts (target, outcome, reason, duration) with failed-over attempts
 * flagged.
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { KeySelect } from '../components/key-select.js';
import { Badge, ErrorNote } from '../components/status.js';
import { formatMs, formatTime, formatUsd } from '../format.js';
import { useKeyNames } from '../keys.js';
import type { LiveAlias, RequestPage, StoredRequest } from '../types.js';
import { usePoll } from '../use-poll.js';

const PAGE_SIZE = 50;

function AttemptsTable({ request }: { request: StoredRequest }) {
  if (request.attempts.length === 0) return <p class="muted">No upstream call was made ({request.code ?? 'refused before routing'}).</p>;
  return (
    <table class="attempts">
      <caption>Attempts of request {request.request_id}</caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Target</th>
          <th scope="col">Outcome</th>
          <th scope="col">Reason</th>
          <th scope="col" class="num">Duration</th>
          <th scope="col" class="num">Cost</th>
        </tr>
      </thead>
      <tbody>
        {request.attempts.map((a) => (
          <tr key={a.position} class={a.failed_over ? 'failed-over' : undefined}>
            <td>{a.position + 1}</td>
            <td class="break">
              {a.target} {a.failed_over && <Badge tone="warn">failed over</Badge>}
            </td>
            <td>
              <Badge tone={a.outcome === 'ok' ? 'good' : 'bad'}>{a.outcome}</Badge>
              {a.upstream_status !== null && <span class="muted small"> HTTP {a.upstream_status}</span>}
            </td>
            <td>{a.reason}</td>
            <td class="num">{formatMs(a.duration_ms)}</td>
            <td class="num">{formatUsd(a.cost_usd)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function RequestsPage() {
  const [alias, setAlias] = useState('');
  const [key, setKey] = useState('');
  const keys = useKeyNames();
  const [status, setStatus] = useState('');
  const [failedOver, setFailedOver] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [open, setOpen] = useState<Set<string>>(new Set());
  const aliases = usePoll((signal) => get<{ data: LiveAlias[] }>('/v1/aliases', signal), null, []);
  const cursor = cursors[cursors.length - 1];
  const page = usePoll(
    (signal) => get<RequestPage>(`/admin/usage/requests${query({ limit: PAGE_SIZE, alias, key, status: /^\d{3}$/.test(status) ? status : undefined, failed_over: failedOver, cursor })}`, signal),
    null,
    [alias, key, status, failedOver, cursor],
  );
  const resetPaging = (): void => setCursors([]);
  const toggle = (id: string): void => {
    const next = new Set(open);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setOpen(next);
  };

  return (
    <section aria-labelledby="requests-title">
      <div class="page-head">
        <h1 id="requests-title">Requests</h1>
        <button type="button" onClick={() => page.refresh()}>
          Refresh
        </button>
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter requests">
        <label class="inline-field">
          Alias
          <select value={alias} onChange={(e) => (setAlias((e.target as HTMLSelectElement).value), resetPaging())}>
            <option value="">any</option>
            {(aliases.data?.data ?? []).map((a) => (
              <option key={a.alias} value={a.alias}>
                {a.alias}
              </option>
            ))}
          </select>
        </label>
        <KeySelect value={key} onChange={(id) => (setKey(id), resetPaging())} names={keys} />
        <label class="inline-field">
          Status
          <input value={status} onInput={(e) => (setStatus((e.target as HTMLInputElement).value.trim()), resetPaging())} inputMode="numeric" size={4} placeholder="any" pattern="\d{3}" />
        </label>
        <label class="inline-field">
          Failed over
          <select value={failedOver} onChange={(e) => (setFailedOver((e.target as HTMLSelectElement).value), resetPaging())}>
            <option value="">any</option>
            <option value="true">yes</option>
            <option value="false">no</option>
          </select>
        </label>
      </form>
      <ErrorNote error={page.error} />
      <div class="table-wrap">
        <table class="requests">
          <caption class="visually-hidden">Recent requests, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Alias / model</th>
              <th scope="col">Key</th>
              <th scope="col">Answered by</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">Attempts</th>
              <th scope="col" class="num">Duration</th>
              <th scope="col" class="num">Tokens</th>
              <th scope="col">
                <span class="visually-hidden">Details</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(page.data?.data ?? []).map((r) => {
              const expanded = open.has(r.id);
              return (
                <Fragment key={r.id}>
                  <tr class="request-row">
                    <td>{formatTime(r.time)}</td>
                    <td class="break">
                      {r.alias ?? r.model}
                      {r.api !== null && <span class="muted small"> via {r.api}</span>}
                    </td>
                    <td class="break">{r.key_name ?? '–'}</td>
                    <td class="break">{r.target ?? '–'}</td>
                    <td>
                      <Badge tone={r.status < 400 ? 'good' : 'bad'}>{r.status}</Badge>
                      {r.code !== null && <span class="muted small"> {r.code}</span>}
                      {r.rescued && <Badge tone="warn">rescued</Badge>}
                    </td>
                    <td class="num">
                      {r.attempts_count}
                      {r.failovers > 0 && <span class="muted small"> ({r.failovers} failed over)</span>}
                    </td>
                    <td class="num">{formatMs(r.duration_ms)}</td>
                    <td class="num">{r.prompt_tokens === null ? '–' : r.prompt_tokens + (r.completion_tokens ?? 0)}</td>
                    <td>
                      <button type="button" aria-expanded={expanded} aria-controls={`attempts-${r.id}`} onClick={() => toggle(r.id)}>
                        {expanded ? 'Hide attempts' : 'Show attempts'}
                        <span class="visually-hidden"> of request {r.request_id}</span>
                      </button>
                    </td>
                  </tr>
                  {expanded && (
                    <tr id={`attempts-${r.id}`} class="attempts-row">
                      <td colSpan={9}>
                        <AttemptsTable request={r} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      </div>
      {page.data !== undefined && page.data.data.length === 0 && <p class="muted">No requests match.</p>}
      <div class="form-buttons">
        {cursors.length > 0 && (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer
          </button>
        )}
        {page.data?.next_cursor && (
          <button type="button" onClick={() => setCursors([...cursors, page.data!.next_cursor!])}>
            Older
          </button>
        )}
      </div>
    </section>
  );
}
