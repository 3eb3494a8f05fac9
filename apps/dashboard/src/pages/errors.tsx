/**
 * Errors: failed requests and failed-over attempts of a window, grouped by
 * target and reason (the usage API's error view, newest 500).
 */
import { MAX_PAGE_SIZE } from '@mana/llm-usage-store/page-size';
import { useMemo, useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { WindowSelect, windowById } from '../components/window-select.js';
import { ErrorNote } from '../components/status.js';
import { formatInt, formatTime } from '../format.js';
import type { RequestPage, StoredRequest } from '../types.js';
import { usePoll } from '../use-poll.js';

const MAX_ROWS = MAX_PAGE_SIZE; // the usage API's largest page

interface Group {
  readonly target: string;
  readonly reason: string;
  readonly kind: 'failed request' | 'failed-over attempt';
  count: number;
  last: string;
  aliases: Set<string>;
}

export function groupErrors(requests: readonly StoredRequest[]): Group[] {
  const groups = new Map<string, Group>();
  const add = (target: string, reason: string, kind: Group['kind'], time: string, alias: string | null): void => {
    const key = `${kind}\u0000${target}\u0000${reason}`;
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { target, reason, kind, count: 0, last: time, aliases: new Set() }));
    group.count += 1;
    if (time > group.last) group.last = time;
    // A request refused before routing may name neither an alias nor a model.
    if (alias !== null) group.aliases.add(alias);
  };
  for (const r of requests) {
    const alias = r.alias ?? r.model;
    for (const a of r.attempts) if (a.failed_over) add(a.target, a.reason, 'failed-over attempt', r.time, alias);
    if (r.status >= 400) {
      const last = r.attempts[r.attempts.length - 1];
      add(r.target ?? last?.target ?? '(no target)', r.code ?? last?.reason ?? `HTTP ${r.status}`, 'failed request', r.time, alias);
    }
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || b.last.localeCompare(a.last));
}

export function ErrorsPage() {
  const [windowId, setWindowId] = useState('24h');
  const window = windowById(windowId);
  const page = usePoll((signal) => get<RequestPage>(`/admin/usage/errors${query({ limit: MAX_ROWS, since: Date.now() - window.spanMs })}`, signal), null, [window.id]);
  const groups = useMemo(() => groupErrors(page.data?.data ?? []), [page.data]);
  return (
    <section aria-labelledby="errors-title">
      <div class="page-head">
        <h1 id="errors-title">Errors</h1>
        <WindowSelect value={window.id} onChange={setWindowId} />
        <button type="button" onClick={() => page.refresh()}>
          Refresh
        </button>
      </div>
      <ErrorNote error={page.error} />
      {page.data !== undefined && (
        <p class="muted small">
          From {formatInt(page.data.data.length)} request{page.data.data.length === 1 ? '' : 's'} with an error in the last {window.label}
          {page.data.next_cursor !== null ? ` (the newest ${MAX_ROWS})` : ''}.
        </p>
      )}
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Errors grouped by target and reason</caption>
          <thead>
            <tr>
              <th scope="col">Target</th>
              <th scope="col">Reason</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">Count</th>
              <th scope="col">Last seen</th>
              <th scope="col">Aliases</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr key={`${g.kind}${g.target}${g.reason}`}>
                <th scope="row" class="break">
                  {g.target}
                </th>
                <td>{g.reason}</td>
                <td>{g.kind}</td>
                <td class="num">{formatInt(g.count)}</td>
                <td>{formatTime(g.last)}</td>
                <td class="break">{[...g.aliases].join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page.data !== undefined && groups.length === 0 && <p class="muted">No errors in the last {window.label}.</p>}
    </section>
  );
}
