/**
 * Errors: failed requests and failed-over attempts of a window, grouped by
 * target and reason (the usage API's error view, newest 500), each group with
 * the aliases and keys it came from; filterable by key.
 */
import { MAX_PAGE_SIZE } from '@mana/llm-usage-store/page-size';
import { useMemo, useState } from 'preact/hooks';
import { get, query } from '../api.js';
import { KeySelect } from '../components/key-select.js';
import { WindowSelect, windowById } from '../components/window-select.js';
import { ErrorNote } from '../components/status.js';
import { formatInt, formatTime } from '../format.js';
import { useKeyNames } from '../keys.js';
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
  /** The names of the keys the requests were made with. */
  keys: Set<string>;
}

export function groupErrors(requests: readonly StoredRequest[]): Group[] {
  const groups = new Map<string, Group>();
  const add = (target: string, reason: string, kind: Group['kind'], r: StoredRequest): void => {
    const id = `${kind}\u0000${target}\u0000${reason}`;
    let group = groups.get(id);
    if (group === undefined) groups.set(id, (group = { target, reason, kind, count: 0, last: r.time, aliases: new Set(), keys: new Set() }));
    group.count += 1;
    if (r.time > group.last) group.last = r.time;
    // A request refused before routing may name neither an alias nor a model; one refused for its key, or made with auth off, names no key.
    const alias = r.alias ?? r.model;
    if (alias !== null) group.aliases.add(alias);
    if (r.key_name !== null) group.keys.add(r.key_name);
  };
  for (const r of requests) {
    for (const a of r.attempts) if (a.failed_over) add(a.target, a.reason, 'failed-over attempt', r);
    if (r.status >= 400) {
      const last = r.attempts[r.attempts.length - 1];
      add(r.target ?? last?.target ?? '(no target)', r.code ?? last?.reason ?? `HTTP ${r.status}`, 'failed request', r);
    }
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || b.last.localeCompare(a.last));
}

export function ErrorsPage() {
  const [windowId, setWindowId] = useState('24h');
  const window = windowById(windowId);
  const [key, setKey] = useState('');
  const keys = useKeyNames();
  const page = usePoll((signal) => get<RequestPage>(`/admin/usage/errors${query({ limit: MAX_ROWS, since: Date.now() - window.spanMs, key })}`, signal), null, [window.id, key]);
  const groups = useMemo(() => groupErrors(page.data?.data ?? []), [page.data]);
  return (
    <section aria-labelledby="errors-title">
      <div class="page-head">
        <h1 id="errors-title">Errors</h1>
        <WindowSelect value={window.id} onChange={setWindowId} />
        <KeySelect value={key} onChange={setKey} names={keys} />
        <button type="button" onClick={() => page.refresh()}>
          Refresh
        </button>
      </div>
      <ErrorNote error={page.error} />
      {page.data !== undefined && (
        <p class="muted small">
          From {formatInt(page.data.data.length)} request{page.data.data.length === 1 ? '' : 's'} with an error{key !== '' && ` made with ${keys.label(key)}`} in the last {window.label}
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
              <th scope="col">Keys</th>
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
                <td class="break">{[...g.keys].join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {page.data !== undefined && groups.length === 0 && <p class="muted">No errors in the last {window.label}.</p>}
    </section>
  );
}
