/**
 * Aliases: each alias with its chain and each target's live state (from
 * /v1/aliases, refreshed every 5 s), and the edit form (admin API).
 */
import { useMemo, useState } from 'preact/hooks';
import { call, get, namePath } from '../api.js';
import { ErrorNote, TargetLoad, TargetStatus } from '../components/status.js';
import type { AdminAlias, AdminProvider, LiveAlias } from '../types.js';
import { usePoll } from '../use-poll.js';
import { LIVE_REFRESH_MS } from './overview.js';
import { AliasForm } from './alias-form.js';

interface Editing {
  readonly alias: AdminAlias | undefined;
  readonly version: string | null;
  readonly providers: AdminProvider[];
  /** Changes on every (re)load, so the form starts from what was read. */
  readonly loadedAt: number;
}

async function loadForEdit(name: string | undefined): Promise<Editing> {
  const providers = await get<{ data: AdminProvider[] }>('/admin/providers');
  if (name === undefined) {
    const list = await call<{ version: string }>('/admin/aliases');
    return { alias: undefined, version: list.etag, providers: providers.data, loadedAt: Date.now() };
  }
  const answer = await call<AdminAlias>(`/admin/aliases/${namePath(name)}`);
  return { alias: answer.body, version: answer.etag, providers: providers.data, loadedAt: Date.now() };
}

export function AliasesPage({ editName, isNew, navigate }: { editName: string | undefined; isNew: boolean; navigate: (hash: string) => void }) {
  const live = usePoll((signal) => get<{ data: LiveAlias[] }>('/v1/aliases', signal), LIVE_REFRESH_MS, []);
  const showForm = isNew || editName !== undefined;
  const editing = usePoll(async () => (showForm ? loadForEdit(isNew ? undefined : editName) : undefined), null, [editName, isNew]);
  // The form is built only from a load that started after it was asked for: data from an earlier
  // load would show a form that is replaced a moment later (losing what was typed meanwhile).
  const requestedAt = useMemo(() => Date.now(), [editName, isNew]);
  const [saved, setSaved] = useState<string | undefined>(undefined);

  return (
    <section aria-labelledby="aliases-title">
      <div class="page-head">
        <h1 id="aliases-title">Aliases</h1>
        {!showForm && (
          <button type="button" class="primary" onClick={() => navigate('#/aliases/new')}>
            New alias
          </button>
        )}
      </div>
      {saved !== undefined && (
        <p class="notice" role="status">
          Saved {saved}.
        </p>
      )}
      {showForm && (
        <>
          <ErrorNote error={editing.error} />
          {editing.data !== undefined && !editing.loading && editing.data.loadedAt >= requestedAt && (
            <AliasForm
              key={editing.data.loadedAt}
              alias={editing.data.alias}
              version={editing.data.version}
              providers={editing.data.providers}
              onSaved={(name) => {
                setSaved(name);
                live.refresh();
                navigate('#/aliases');
              }}
              onCancel={() => navigate('#/aliases')}
              onReload={() => editing.refresh()}
            />
          )}
        </>
      )}
      <ErrorNote error={live.error} />
      <ul class="alias-list">
        {(live.data?.data ?? []).map((a) => (
          <li key={a.alias} class="card alias-card" aria-labelledby={`alias-${a.alias}`}>
            <div class="card-head">
              <h2 id={`alias-${a.alias}`}>{a.alias}</h2>
              <span class="muted">
                {a.kind === 'embedding' ? 'embedding · ' : ''}
                {a.chain.length > 1 ? a.strategy : 'one target'}
              </span>
              <button
                type="button"
                onClick={() => {
                  setSaved(undefined);
                  navigate(`#/aliases/edit/${a.alias}`);
                }}
                aria-label={`Edit ${a.alias}`}
              >
                Edit
              </button>
            </div>
            {a.description !== '' && <p class="muted">{a.description}</p>}
            <ol class="chain">
              {a.chain.map((t) => (
                <li key={t.target}>
                  <span class="target-name">{t.target}</span>
                  {a.strategy === 'weighted' && a.chain.length > 1 && <span class="muted"> weight {t.weight}</span>} <TargetStatus target={t} /> <TargetLoad target={t} />
                </li>
              ))}
            </ol>
          </li>
        ))}
      </ul>
    </section>
  );
}
