/**
 * Config history: every applied config version (newest first), each with its
 * diff against the one before, and rollback (through the admin write path,
 * with `If-Match`: a change made meanwhile is a 412, not an overwrite).
 */
import { useState } from 'preact/hooks';
import { ApiError, call, get } from '../api.js';
import { Badge, ErrorNote } from '../components/status.js';
import { formatTime } from '../format.js';
import type { HistoryPage, HistoryVersion } from '../types.js';
import { usePoll } from '../use-poll.js';

function Diff({ text }: { text: string }) {
  // The two `---`/`+++` file lines and the `===` banner say nothing the page does not.
  const lines = text.split('\n').filter((line) => !/^(={3,}|-{3} |\+{3} |Index: )/.test(line));
  return (
    <pre class="diff" aria-label="Changes against the previous version">
      {lines.map((line, i) => (
        <span key={i} class={line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : line.startsWith('@@') ? 'diff-hunk' : undefined}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

export function HistoryPage() {
  const history = usePoll((signal) => call<HistoryPage>('/admin/config/history?limit=50', { signal }), null, []);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  const version = usePoll((signal) => (selected === undefined ? Promise.resolve(undefined) : get<HistoryVersion>(`/admin/config/history/${selected}`, signal)), null, [selected]);
  const [rollbackError, setRollbackError] = useState<ApiError | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const current = history.data?.body.current_version;
  const rollback = async (target: string): Promise<void> => {
    setBusy(true);
    setRollbackError(undefined);
    setNotice(undefined);
    try {
      const answer = await call<{ version: string; changed: boolean }>('/admin/config/rollback', { method: 'POST', body: { version: target }, ifMatch: history.data?.etag ?? null });
      setNotice(answer.body.changed ? `Rolled back to ${target}: the config is now version ${answer.body.version}.` : `The config already is version ${target}.`);
      history.refresh();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      setRollbackError(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="history-title">
      <div class="page-head">
        <h1 id="history-title">Config history</h1>
        <button type="button" onClick={() => history.refresh()}>
          Refresh
        </button>
      </div>
      {notice !== undefined && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {rollbackError !== undefined && rollbackError.code === 'version_conflict' ? (
        <div class="conflict" role="alert">
          <p>
            <strong>The config changed since this list was loaded.</strong> Nothing was rolled back. Reload the list, check the versions, and try again.
          </p>
          <button type="button" onClick={() => (setRollbackError(undefined), history.refresh())}>
            Reload the history
          </button>
        </div>
      ) : (
        <ErrorNote error={rollbackError} />
      )}
      <ErrorNote error={history.error} />
      <div class="history">
        <ol class="versions" aria-label="Applied config versions, newest first">
          {(history.data?.body.data ?? []).map((entry) => (
            <li key={`${entry.version}${entry.applied_at}`} class={entry.version === selected ? 'selected' : undefined}>
              <button type="button" onClick={() => setSelected(entry.version)} aria-pressed={entry.version === selected}>
                <code>{entry.version}</code>
              </button>{' '}
              <span class="muted small">
                {entry.source} · {formatTime(entry.applied_at)}
              </span>{' '}
              {entry.version === current && <Badge tone="good">current</Badge>}
            </li>
          ))}
        </ol>
        <div class="version-detail">
          {selected === undefined && <p class="muted">Pick a version to see what it changed.</p>}
          <ErrorNote error={version.error} />
          {version.data !== undefined && (
            <article aria-labelledby="version-title">
              <div class="card-head">
                <h2 id="version-title">
                  Version <code>{version.data.version}</code>
                </h2>
                {version.data.version !== current && (
                  <button type="button" class="primary" disabled={busy} onClick={() => void rollback(version.data!.version)}>
                    Roll back to this version
                  </button>
                )}
              </div>
              <p class="muted small">
                {version.data.source} · applied {formatTime(version.data.applied_at)}
                {version.data.previous_version !== null && (
                  <>
                    {' '}
                    · changes against <code>{version.data.previous_version}</code>
                  </>
                )}
              </p>
              {version.data.diff === null ? <p class="muted">The oldest version kept: nothing to compare it with.</p> : <Diff text={version.data.diff} />}
            </article>
          )}
        </div>
      </div>
    </section>
  );
}
