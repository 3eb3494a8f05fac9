/**
 * Keys: every API key (GET /admin/keys): the MANA_LLM_API_KEYS keys,
 * read-only as env-1, env-2, …, then the service keys with their settings and
 * last use. A service key is created here (its secret shown once), rotated
 * with a chosen grace (the new secret shown once), disabled or enabled, and
 * deleted after a confirmation. Names and descriptions are shown as text.
 */
import { useState } from 'preact/hooks';
import { ApiError, call } from '../api.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { OneTimeSecret } from '../components/one-time-secret.js';
import { Badge, ErrorNote, type Tone } from '../components/status.js';
import { formatDateTime, formatInt, formatTime, relativeTime } from '../format.js';
import { listKeys } from '../keys.js';
import type { AdminKey, IssuedAdminKey } from '../types.js';
import { usePoll } from '../use-poll.js';
import { KeyForm } from './key-form.js';

/** The grace choices of a rotation (the API's `grace`; its default is 24 h). */
const GRACES = [
  { value: '0', label: 'none: the old key is refused at once' },
  { value: '1h', label: '1 hour' },
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
] as const;
const DEFAULT_GRACE = '24h';

/** A secret the gateway has just shown, until the user dismisses it. */
interface Shown {
  readonly title: string;
  readonly secret: string;
  readonly detail?: string;
}

type Pending = { readonly action: 'rotate' | 'delete'; readonly key: AdminKey };

function keyState(key: AdminKey, now = Date.now()): { tone: Tone; text: string } {
  if (key.disabled) return { tone: 'bad', text: 'disabled' };
  if (key.expires_at !== null && new Date(key.expires_at).getTime() <= now) return { tone: 'bad', text: 'expired' };
  return { tone: 'good', text: 'active' };
}

function shownOnce(issued: IssuedAdminKey, title: string, detail?: string): Shown {
  // Only the secret and words about it are kept: not the answer that carried it.
  return { title, secret: issued.key, detail };
}

export function KeysPage() {
  const keys = usePoll((signal) => listKeys(signal), null, []);
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<Shown | undefined>(undefined);
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const [grace, setGrace] = useState<string>(DEFAULT_GRACE);
  /** A change is on its way: the buttons wait for it (one change at a time). */
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<ApiError | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);

  /** Runs one change of a key, then reads the list again; a refusal is shown where the change was asked for. */
  const change = async (work: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setActionError(undefined);
    setNotice(undefined);
    try {
      await work();
      keys.refresh();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      setActionError(error);
    } finally {
      setBusy(false);
    }
  };

  const setDisabled = (key: AdminKey, disabled: boolean): Promise<void> =>
    change(async () => {
      await call(`/admin/keys/${encodeURIComponent(key.id)}`, { method: 'PATCH', body: { disabled } });
      setNotice(disabled ? `Disabled ${key.name}: its requests are refused from now on.` : `Enabled ${key.name}.`);
    });

  const confirmPending = (): Promise<void> | undefined => {
    if (pending === undefined) return;
    const { action, key } = pending;
    return change(async () => {
      if (action === 'delete') {
        await call(`/admin/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
        setNotice(`Deleted ${key.name}: its requests are refused from now on.`);
      } else {
        const answer = await call<IssuedAdminKey>(`/admin/keys/${encodeURIComponent(key.id)}/rotate`, { method: 'POST', body: { grace } });
        const until = answer.body.previous_secret_valid_until;
        setShown(shownOnce(answer.body, `New key for ${key.name}`, until === null ? 'The old key is refused from now on.' : `The old key keeps working until ${formatTime(until)} (${relativeTime(until)}).`));
      }
      setPending(undefined);
    });
  };

  const ask = (action: Pending['action'], key: AdminKey): void => {
    setActionError(undefined);
    setGrace(DEFAULT_GRACE);
    setPending({ action, key });
  };

  return (
    <section aria-labelledby="keys-title">
      <div class="page-head">
        <h1 id="keys-title">Keys</h1>
        {!creating && (
          <button type="button" class="primary" onClick={() => (setCreating(true), setShown(undefined), setNotice(undefined))}>
            New key
          </button>
        )}
        <button type="button" onClick={() => keys.refresh()}>
          Refresh
        </button>
      </div>
      {shown !== undefined && <OneTimeSecret title={shown.title} secret={shown.secret} detail={shown.detail} onDone={() => setShown(undefined)} />}
      {creating && (
        <KeyForm
          onCreated={(issued) => {
            setCreating(false);
            setShown(shownOnce(issued, `Key ${issued.name} created`, `Its id is ${issued.id}: usage records and the Requests page name the key by it.`));
            keys.refresh();
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      {notice !== undefined && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {pending === undefined && <ErrorNote error={actionError} />}
      <ErrorNote error={keys.error} />
      <div class="table-wrap">
        <table class="keys">
          <caption class="visually-hidden">API keys: the MANA_LLM_API_KEYS keys, then the service keys, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Description</th>
              <th scope="col">Created</th>
              <th scope="col">Last use</th>
              <th scope="col">Expires</th>
              <th scope="col">State</th>
              <th scope="col">Allowed aliases</th>
              <th scope="col">Priority</th>
              <th scope="col" class="num">Max concurrency</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(keys.data ?? []).map((key) => {
              const state = keyState(key);
              return (
                <tr key={key.id} data-key-id={key.id}>
                  <th scope="row" class="break">
                    {key.name}
                    {key.read_only && (
                      <>
                        {' '}
                        <Badge tone="muted">read-only</Badge>
                      </>
                    )}
                  </th>
                  <td>
                    <code>{key.id}</code>
                  </td>
                  <td class="break key-description">{key.description ?? ''}</td>
                  <td>{key.created_at === null ? '–' : formatTime(key.created_at)}</td>
                  <td title={key.last_used_at ?? undefined}>{key.read_only ? '–' : key.last_used_at === null ? 'never' : formatTime(key.last_used_at)}</td>
                  <td>{key.expires_at === null ? 'never' : formatDateTime(key.expires_at)}</td>
                  <td>
                    <Badge tone={state.tone}>{state.text}</Badge>
                    {key.previous_secret_valid_until !== null && <span class="muted small"> old key valid until {formatTime(key.previous_secret_valid_until)}</span>}
                  </td>
                  <td class="break key-aliases">{key.aliases === null ? 'all' : key.aliases.join(', ')}</td>
                  <td>{key.priority ?? 'default'}</td>
                  <td class="num">{key.max_concurrency === null ? 'no limit' : formatInt(key.max_concurrency)}</td>
                  <td>
                    {key.read_only ? (
                      <span class="muted small">set by MANA_LLM_API_KEYS</span>
                    ) : (
                      <span class="row-buttons">
                        <button type="button" onClick={() => ask('rotate', key)} disabled={busy}>
                          Rotate<span class="visually-hidden"> {key.name}</span>
                        </button>
                        <button type="button" onClick={() => void setDisabled(key, !key.disabled)} disabled={busy}>
                          {key.disabled ? 'Enable' : 'Disable'}
                          <span class="visually-hidden"> {key.name}</span>
                        </button>
                        <button type="button" onClick={() => ask('delete', key)} disabled={busy}>
                          Delete<span class="visually-hidden"> {key.name}</span>
                        </button>
                      </span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {keys.data !== undefined && keys.data.length === 0 && <p class="muted">No keys: the gateway's API is open to anyone who reaches it. Create a key to turn auth on.</p>}
      {pending?.action === 'delete' && (
        <ConfirmDialog title={`Delete key ${pending.key.name}?`} confirmLabel="Delete key" busy={busy} error={actionError} onConfirm={() => void confirmPending()} onCancel={() => setPending(undefined)}>
          <p>Its requests are refused from now on, on every replica. Its usage records stay, under its id {pending.key.id}. This cannot be undone.</p>
        </ConfirmDialog>
      )}
      {pending?.action === 'rotate' && (
        <ConfirmDialog title={`Rotate key ${pending.key.name}?`} confirmLabel="Rotate key" busy={busy} error={actionError} onConfirm={() => void confirmPending()} onCancel={() => setPending(undefined)}>
          <p>The gateway makes a new key and shows it once. The service must switch to it before the old key's grace ends.</p>
          <label class="inline-field">
            Grace for the old key
            <select value={grace} onChange={(e) => setGrace((e.target as HTMLSelectElement).value)}>
              {GRACES.map((g) => (
                <option key={g.value} value={g.value}>
                  {g.label}
                </option>
              ))}
            </select>
          </label>
        </ConfirmDialog>
      )}
    </section>
  );
}
