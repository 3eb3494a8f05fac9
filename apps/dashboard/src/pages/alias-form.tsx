/**
 * The alias edit form: targets (add from the configured providers, remove,
 * move up/down), a strategy select that exists only with two or more targets,
 * weight inputs for `weighted`, description and settings. Save is a PUT with
 * `If-Match` (the version the form was read at): a change made underneath is
 * a 412, shown with a way to reload the current version and redo the edit.
 * Errors are shown next to the field they concern.
 */
import { STRATEGIES } from '@mana/llm-router/strategies';
import { useState } from 'preact/hooks';
import { ApiError, call, namePath } from '../api.js';
import type { AdminAlias, AdminProvider } from '../types.js';

interface TargetRow {
  readonly key: number;
  readonly target: string;
  readonly weight: string;
  /** Fields of the chain entry the form does not edit (settings, price, …), sent back unchanged. */
  readonly rest: Record<string, unknown>;
}

export interface FormValues {
  readonly name: string;
  readonly description: string;
  readonly strategy: string;
  readonly settings: string;
  readonly targets: readonly TargetRow[];
}

type Field = 'name' | 'description' | 'strategy' | 'settings' | 'targets' | 'weights' | 'form';
type FieldErrors = Partial<Record<Field, string>>;

let nextKey = 1;

export function formValues(alias: AdminAlias | undefined): FormValues {
  if (alias === undefined) return { name: 'mana/', description: '', strategy: 'failover', settings: '', targets: [] };
  return {
    name: alias.name,
    description: alias.description,
    strategy: alias.strategy ?? 'failover',
    settings: alias.settings === undefined ? '' : JSON.stringify(alias.settings, null, 2),
    targets: alias.chain.map(({ id: _id, target, weight, ...rest }) => ({ key: nextKey++, target, weight: weight === undefined ? '1' : String(weight), rest })),
  };
}

/** Which field a refusal of the gateway concerns: its `param`, else words of the loader's message. */
export function fieldOf(error: ApiError): Field {
  const param = error.param ?? '';
  const text = `${param} ${error.message}`.toLowerCase();
  if (/weight/.test(text)) return 'weights';
  if (/^(chain|targets?)\b/.test(param) || /target|provider|chain/.test(text)) return 'targets';
  if (/strategy/.test(text)) return 'strategy';
  if (/setting/.test(text)) return 'settings';
  if (/description/.test(text)) return 'description';
  if (error.code === 'invalid_name' || error.code === 'name_conflict') return 'name';
  return 'form';
}

function checkLocally(values: FormValues, isNew: boolean): FieldErrors {
  const errors: FieldErrors = {};
  if (isNew && !/^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._:-]*)+$/i.test(values.name)) errors.name = 'A name like mana/team (letters, digits, . _ - and /).';
  if (values.targets.length === 0) errors.targets = 'Add at least one target.';
  if (values.targets.length > 1 && values.strategy === 'weighted') {
    const bad = values.targets.find((t) => !(Number(t.weight) > 0));
    if (bad !== undefined) errors.weights = `The weight of ${bad.target} must be a positive number.`;
  }
  if (values.settings.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(values.settings);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) errors.settings = 'Settings are a JSON object, e.g. {"first_byte_timeout": "2s"}.';
    } catch {
      errors.settings = 'Settings are not valid JSON.';
    }
  }
  return errors;
}

function requestBody(values: FormValues): Record<string, unknown> {
  const several = values.targets.length > 1;
  const weighted = several && values.strategy === 'weighted';
  return {
    description: values.description,
    ...(several ? { strategy: values.strategy } : {}),
    ...(values.settings.trim() === '' ? {} : { settings: JSON.parse(values.settings) as unknown }),
    chain: values.targets.map((t) => (weighted || Object.keys(t.rest).length > 0 ? { target: t.target, ...t.rest, ...(weighted ? { weight: Number(t.weight) } : {}) } : t.target)),
  };
}

function FieldError({ id, message }: { id: string; message: string | undefined }) {
  return message === undefined ? null : (
    <p class="field-error" id={id} role="alert">
      {message}
    </p>
  );
}

export interface AliasFormProps {
  readonly alias: AdminAlias | undefined;
  /** The config version the form was read at (the ETag). */
  readonly version: string | null;
  readonly providers: readonly AdminProvider[];
  readonly onSaved: (name: string) => void;
  readonly onCancel: () => void;
  /** Re-reads the alias and the version from the gateway (after a 412). */
  readonly onReload: () => void;
}

export function AliasForm({ alias, version, providers, onSaved, onCancel, onReload }: AliasFormProps) {
  const isNew = alias === undefined;
  const [values, setValues] = useState<FormValues>(() => formValues(alias));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [conflict, setConflict] = useState(false);
  const [saving, setSaving] = useState(false);
  const [newProvider, setNewProvider] = useState(providers[0]?.name ?? '');
  const [newModel, setNewModel] = useState('');

  const set = (patch: Partial<FormValues>): void => setValues((v) => ({ ...v, ...patch }));
  const setTargets = (targets: TargetRow[]): void => set({ targets });
  const move = (index: number, by: -1 | 1): void => {
    const targets = [...values.targets];
    const [row] = targets.splice(index, 1);
    targets.splice(index + by, 0, row!);
    setTargets(targets);
  };
  const addTarget = (): void => {
    const model = newModel.trim();
    if (newProvider === '' || model === '') {
      setErrors({ ...errors, targets: 'Pick a provider and type a model to add a target.' });
      return;
    }
    setTargets([...values.targets, { key: nextKey++, target: `${newProvider}/${model}`, weight: '1', rest: {} }]);
    setNewModel('');
    setErrors({ ...errors, targets: undefined });
  };

  const save = async (event: Event): Promise<void> => {
    event.preventDefault();
    const local = checkLocally(values, isNew);
    setErrors(local);
    setConflict(false);
    if (Object.keys(local).length > 0) return;
    setSaving(true);
    try {
      await call(`/admin/aliases/${namePath(values.name)}`, { method: 'PUT', body: requestBody(values), ifMatch: version });
      onSaved(values.name);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'version_conflict') setConflict(true);
      else setErrors({ [fieldOf(error)]: error.message });
    } finally {
      setSaving(false);
    }
  };

  const several = values.targets.length > 1;
  const weighted = several && values.strategy === 'weighted';
  return (
    <form class="card alias-form" onSubmit={(e) => void save(e)} aria-labelledby="alias-form-title" noValidate>
      <h2 id="alias-form-title">{isNew ? 'New alias' : `Edit ${alias.name}`}</h2>
      {conflict && (
        <div class="conflict" role="alert">
          <p>
            <strong>The config changed since this form was opened</strong> (the file was edited, or another change was saved). Your change was not saved.
          </p>
          <button type="button" onClick={onReload}>
            Reload the current version
          </button>
        </div>
      )}
      <FieldError id="form-error" message={errors.form} />
      {isNew && (
        <div class="field">
          <label for="alias-name">Name</label>
          <input id="alias-name" value={values.name} onInput={(e) => set({ name: (e.target as HTMLInputElement).value })} aria-invalid={errors.name !== undefined} aria-describedby="alias-name-error" autoComplete="off" />
          <FieldError id="alias-name-error" message={errors.name} />
        </div>
      )}
      <div class="field">
        <label for="alias-description">Description</label>
        <input id="alias-description" value={values.description} onInput={(e) => set({ description: (e.target as HTMLInputElement).value })} aria-invalid={errors.description !== undefined} aria-describedby="alias-description-error" />
        <FieldError id="alias-description-error" message={errors.description} />
      </div>

      <fieldset class="field" aria-describedby="targets-error weights-error">
        <legend>Targets, in order</legend>
        {values.targets.length === 0 && <p class="muted">No targets yet.</p>}
        <ol class="target-rows">
          {values.targets.map((t, index) => (
            <li key={t.key} class="target-row">
              <span class="target-name">{t.target}</span>
              {weighted && (
                <label class="inline-field">
                  Weight<span class="visually-hidden"> of {t.target}</span>
                  <input
                    type="number"
                    min="0"
                    step="any"
                    inputMode="decimal"
                    class="weight"
                    value={t.weight}
                    aria-invalid={errors.weights !== undefined}
                    onInput={(e) => setTargets(values.targets.map((row) => (row.key === t.key ? { ...row, weight: (e.target as HTMLInputElement).value } : row)))}
                  />
                </label>
              )}
              <span class="row-buttons">
                <button type="button" onClick={() => move(index, -1)} disabled={index === 0} aria-label={`Move ${t.target} up`}>
                  ↑
                </button>
                <button type="button" onClick={() => move(index, 1)} disabled={index === values.targets.length - 1} aria-label={`Move ${t.target} down`}>
                  ↓
                </button>
                <button type="button" onClick={() => setTargets(values.targets.filter((row) => row.key !== t.key))} aria-label={`Remove ${t.target}`}>
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ol>
        <div class="add-target">
          <label class="inline-field">
            Provider
            <select value={newProvider} onChange={(e) => setNewProvider((e.target as HTMLSelectElement).value)}>
              {providers.map((p) => (
                <option key={p.name} value={p.name}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
          <label class="inline-field">
            Model
            <input value={newModel} onInput={(e) => setNewModel((e.target as HTMLInputElement).value)} placeholder="as the provider names it" autoComplete="off" />
          </label>
          <button type="button" onClick={addTarget}>
            Add target
          </button>
        </div>
        <FieldError id="targets-error" message={errors.targets} />
        <FieldError id="weights-error" message={errors.weights} />
      </fieldset>

      {several && (
        <div class="field">
          <label for="alias-strategy">Strategy</label>
          <select id="alias-strategy" value={values.strategy} onChange={(e) => set({ strategy: (e.target as HTMLSelectElement).value })} aria-describedby="alias-strategy-error">
            {STRATEGIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <FieldError id="alias-strategy-error" message={errors.strategy} />
        </div>
      )}

      <div class="field">
        <label for="alias-settings">Settings (JSON, optional)</label>
        <textarea id="alias-settings" rows={3} value={values.settings} onInput={(e) => set({ settings: (e.target as HTMLTextAreaElement).value })} aria-invalid={errors.settings !== undefined} aria-describedby="alias-settings-error" spellcheck={false} />
        <FieldError id="alias-settings-error" message={errors.settings} />
      </div>

      <div class="form-buttons">
        <button type="submit" class="primary" disabled={saving}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
