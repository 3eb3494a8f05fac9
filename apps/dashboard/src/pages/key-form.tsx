/**
 * The form that creates a service key. Its values are checked by the same
 * field table the gateway checks a create with (`settingsFromCreate` of
 * @mana/llm-service-keys), so the form says exactly what the API would, at
 * the field concerned, before anything is sent. What only the gateway knows
 * (an alias the config lacks, a name another key holds) comes back as the
 * API's refusal, shown at its `param`.
 */
import { KEY_FIELDS, isKeyFieldError, settingsFromCreate, type KeyFieldName } from '@mana/llm-service-keys/key-fields';
import { KEY_PRIORITIES } from '@mana/llm-service-keys/key-record';
import { useState } from 'preact/hooks';
import { ApiError, call } from '../api.js';
import { SubmitCancel } from '../components/submit-cancel.js';
import type { IssuedAdminKey } from '../types.js';

interface Values {
  readonly name: string;
  readonly description: string;
  /** A `datetime-local` value (the browser's time zone), or empty: never. */
  readonly expiresAt: string;
  /** Aliases and provider/model targets separated by commas or spaces; empty: all. */
  readonly aliases: string;
  readonly priority: string;
  readonly maxConcurrency: string;
}

const EMPTY: Values = { name: '', description: '', expiresAt: '', aliases: '', priority: '', maxConcurrency: '' };

type Errors = Partial<Record<KeyFieldName | 'form', string>>;

/** The create body as the API reads it: only the fields given, typed as the API wants them (a value that is not is sent as typed, to be refused with the field's rule). */
export function createBody(values: Values): Record<string, unknown> {
  const body: Record<string, unknown> = { name: values.name.trim() };
  if (values.description !== '') body.description = values.description;
  if (values.expiresAt !== '') {
    const ms = new Date(values.expiresAt).getTime();
    body.expires_at = Number.isFinite(ms) ? new Date(ms).toISOString() : values.expiresAt;
  }
  const aliases = values.aliases.split(/[\s,]+/).filter((entry) => entry !== '');
  if (aliases.length > 0) body.aliases = aliases;
  if (values.priority !== '') body.priority = values.priority;
  const concurrency = values.maxConcurrency.trim();
  if (concurrency !== '') body.max_concurrency = /^\d+$/.test(concurrency) ? Number(concurrency) : concurrency;
  return body;
}

function isFieldName(param: string | null | undefined): param is KeyFieldName {
  return param !== null && param !== undefined && Object.hasOwn(KEY_FIELDS, param);
}

function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (message === undefined) return null;
  return (
    <p class="field-error" id={id} role="alert">
      {message}
    </p>
  );
}

export function KeyForm({ onCreated, onCancel }: { onCreated: (issued: IssuedAdminKey) => void; onCancel: () => void }) {
  const [values, setValues] = useState<Values>(EMPTY);
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<Values>): void => setValues({ ...values, ...change });
  const input = (field: keyof Values) => (e: Event) => set({ [field]: (e.target as HTMLInputElement).value });
  /** The attributes that tie a control to its error. */
  const described = (field: KeyFieldName) => ({ 'aria-invalid': errors[field] !== undefined, 'aria-describedby': `key-${field}-error` });

  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const body = createBody(values);
    try {
      settingsFromCreate(body);
    } catch (error) {
      if (!isKeyFieldError(error)) throw error;
      setErrors({ [isFieldName(error.param) ? error.param : 'form']: error.message });
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      const answer = await call<IssuedAdminKey>('/admin/keys', { method: 'POST', body });
      onCreated(answer.body);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      setErrors({ [isFieldName(error.param) ? error.param : 'form']: error.message });
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="card alias-form key-form" onSubmit={(e) => void submit(e)} aria-labelledby="key-form-title" noValidate>
      <h2 id="key-form-title">New service key</h2>
      <FieldError id="key-form-error" message={errors.form} />
      <div class="field">
        <label for="key-name">Name</label>
        <input id="key-name" value={values.name} onInput={input('name')} autoComplete="off" spellcheck={false} {...described('name')} />
        <p class="muted small">The service that uses the key, e.g. mana-api: {KEY_FIELDS.name.rule}.</p>
        <FieldError id="key-name-error" message={errors.name} />
      </div>
      <div class="field">
        <label for="key-description">Description</label>
        <textarea id="key-description" rows={2} value={values.description} onInput={input('description')} {...described('description')} />
        <FieldError id="key-description-error" message={errors.description} />
      </div>
      <div class="field">
        <label for="key-expires_at">Expires</label>
        <input id="key-expires_at" type="datetime-local" value={values.expiresAt} onInput={input('expiresAt')} {...described('expires_at')} />
        <p class="muted small">Empty: never. From then on the key is refused.</p>
        <FieldError id="key-expires_at-error" message={errors.expires_at} />
      </div>
      <div class="field">
        <label for="key-aliases">Allowed aliases</label>
        <input id="key-aliases" value={values.aliases} onInput={input('aliases')} autoComplete="off" spellcheck={false} placeholder="all" {...described('aliases')} />
        <p class="muted small">Aliases and provider/model targets the key may use, separated by commas. Empty: all.</p>
        <FieldError id="key-aliases-error" message={errors.aliases} />
      </div>
      <div class="field">
        <label for="key-priority">Priority</label>
        <select id="key-priority" value={values.priority} onChange={input('priority')} {...described('priority')}>
          <option value="">the gateway's default</option>
          {KEY_PRIORITIES.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        <p class="muted small">For the key's requests that send no X-Mana-LLM-Priority.</p>
        <FieldError id="key-priority-error" message={errors.priority} />
      </div>
      <div class="field">
        <label for="key-max_concurrency">Max concurrency</label>
        <input id="key-max_concurrency" class="weight" inputMode="numeric" value={values.maxConcurrency} onInput={input('maxConcurrency')} placeholder="no limit" {...described('max_concurrency')} />
        <p class="muted small">Requests of this key in flight at once on one replica. Empty: no limit.</p>
        <FieldError id="key-max_concurrency-error" message={errors.max_concurrency} />
      </div>
      <SubmitCancel label="Create key" busyLabel="Creating…" busy={busy} onCancel={onCancel} />
    </form>
  );
}
