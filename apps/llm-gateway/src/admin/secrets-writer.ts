/**
 * How a credential sent through the admin API is stored: never in the YAML
 * (which is diffed, reviewed, kept in the config history and, with replicas,
 * in PostgreSQL). A credential is a provider's `api_key`, or the value of one
 * of its credential headers (`Authorization`, `x-api-key`, … or one it lists
 * in `secret_headers`: the router's `isCredentialHeader`).
 *
 * A reference the router expands (`${NAME}` or `${NAME:-default}`, see its
 * `envReferenceName`) is written as sent, LiteLLM's `os.environ/NAME` as
 * `${NAME}`; a header value that refers to a variable (`Bearer ${TOKEN}`) is
 * written as sent too, since a value moved into the secrets file is not
 * expanded again. A literal goes to the secrets file beside the config (mode
 * 0600, read by the router's loader) under a generated name, and the YAML
 * refers to that name. The file format is the router's (`NAME=value` lines).
 */
import { SECRET_NAME, envReferenceName, envReferences, secretsPathFor } from '@mana/llm-router';
import { writeFileAtomic } from './atomic-write.js';
import { isPlainObject } from '../plain-object.js';

/** Longest API key or credential header value accepted: 4 KB (real keys are under 200 bytes). */
export const MAX_API_KEY_BYTES = 4096;

export type StoredKey =
  | { readonly kind: 'reference'; readonly yaml: string }
  | { readonly kind: 'secret'; readonly yaml: string; readonly name: string; readonly value: string }
  | { readonly kind: 'invalid'; readonly reason: string };

/** Which value of a provider a secret holds. */
export type SecretField = { readonly kind: 'api_key' } | { readonly kind: 'header'; readonly header: string };

const API_KEY: SecretField = { kind: 'api_key' };

const LITELLM_REFERENCE = /^os\.environ\/([A-Za-z_][A-Za-z0-9_]*)$/;

function variablePart(text: string): string {
  return text.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/**
 * The name a provider's literal secret is stored under when nothing else uses
 * it: `local-vllm` → `MANA_LLM_SECRET_LOCAL_VLLM_API_KEY`, its header
 * `x-api-key` → `MANA_LLM_SECRET_LOCAL_VLLM_HEADER_X_API_KEY`.
 */
export function secretNameFor(provider: string, field: SecretField = API_KEY): string {
  const what = field.kind === 'api_key' ? 'API_KEY' : `HEADER_${variablePart(field.header)}`;
  return `MANA_LLM_SECRET_${variablePart(provider)}_${what}`;
}

/**
 * The name a new secret is stored under: its own name (secretNameFor) unless
 * another value of the config refers to that variable, else the first free of
 * `NAME_2`, `NAME_3`, … Names are not unique by construction — `a-b` and
 * `a_b` both give `A_B`, and a file an earlier gateway wrote may refer to any
 * of them — so each is checked against what the config uses: writing one
 * provider's key must never replace the key another provider reads.
 * Ends within `taken.size + 1` tries.
 */
export function freeSecretName(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}_${n}`)) return `${base}_${n}`;
}

/**
 * Every variable the config `data` refers to, in any string at any depth,
 * except inside provider `except` (whose values the write replaces).
 * Iterative: the data comes from a file someone else may have written.
 */
export function variablesInUse(data: unknown, except: string): Set<string> {
  const names = new Set<string>();
  const pending: unknown[] = [data];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      for (const name of envReferences(value)) names.add(name);
    } else if (Array.isArray(value)) {
      pending.push(...value);
    } else if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) {
        if (value === data && key === 'providers' && isPlainObject(item)) {
          for (const [provider, entry] of Object.entries(item)) if (provider !== except) pending.push(entry);
        } else {
          pending.push(item);
        }
      }
    }
  }
  return names;
}

/** Control characters refused in an api_key: a line break would add a line to the secrets file. */
const KEY_CONTROL = /[\x00-\x1f\x7f]/;
/** In a header value a tab is allowed (HTTP sends it), no other control character. */
const HEADER_CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/;

/** Why a credential value cannot be stored, never quoting it; undefined when it can. */
function credentialProblem(what: string, value: string, control: RegExp): string | undefined {
  if (Buffer.byteLength(value) > MAX_API_KEY_BYTES) return `${what} is longer than ${MAX_API_KEY_BYTES} bytes`;
  if (value.trim() === '' || control.test(value)) return `${what} must be a non-empty single line`;
  return undefined;
}

function secret(provider: string, field: SecretField, value: string, taken: ReadonlySet<string>): StoredKey {
  const name = freeSecretName(secretNameFor(provider, field), taken);
  return { kind: 'secret', yaml: `\${${name}}`, name, value };
}

/** Decides how `key` (as sent) is stored for `provider`; a literal avoids the variables in `taken`. The reason of an invalid key never quotes it. */
export function storeApiKey(provider: string, key: string, taken: ReadonlySet<string> = new Set()): StoredKey {
  // Checked before the reference test: a `${NAME:-default}` carries a default that must fit these bounds too.
  const problem = credentialProblem('api_key', key, KEY_CONTROL);
  if (problem !== undefined) return { kind: 'invalid', reason: problem };
  if (envReferenceName(key) !== undefined) return { kind: 'reference', yaml: key };
  const litellm = LITELLM_REFERENCE.exec(key)?.[1];
  if (litellm !== undefined) return { kind: 'reference', yaml: `\${${litellm}}` };
  return secret(provider, API_KEY, key, taken);
}

/** Decides how the value of credential header `header` is stored for `provider` (see storeApiKey). */
export function storeCredentialHeader(provider: string, header: string, value: string, taken: ReadonlySet<string> = new Set()): StoredKey {
  const problem = credentialProblem(`header ${header.slice(0, 100).replace(/[\x00-\x1f\x7f]/g, '?')}`, value, HEADER_CONTROL);
  if (problem !== undefined) return { kind: 'invalid', reason: problem };
  if (envReferences(value).length > 0) return { kind: 'reference', yaml: value };
  return secret(provider, { kind: 'header', header }, value, taken);
}

/** The secrets file's text: a header, then `NAME=value` lines in name order. */
export function secretsText(secrets: ReadonlyMap<string, string>): string {
  const lines = ['# API keys and credential headers stored by the gateway admin API. Keep this file private (mode 0600).'];
  for (const name of [...secrets.keys()].sort()) {
    if (!SECRET_NAME.test(name)) continue;
    lines.push(`${name}=${secrets.get(name)}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function writeSecretsFile(configPath: string, secrets: ReadonlyMap<string, string>): Promise<void> {
  await writeFileAtomic(secretsPathFor(configPath), secretsText(secrets), { mode: 0o600 });
}
