/**
 * Providers as the admin API reads and writes them. The API key and the
 * values of credential headers are never written into the YAML (see
 * secrets-writer.ts) and never returned: a GET says whether a key is set and
 * which variable it comes from.
 */
import { BUILT_IN_PROVIDERS, PROVIDER_KEYS, envReferenceName, isCredentialHeader, redactUrl, type ProviderConfig } from '@mana/llm-router';
import { AdminFailure } from './admin-failure.js';
import { checkBodyName } from './body-checks.js';
import { storeApiKey, storeCredentialHeader, variablesInUse, type StoredKey } from './secrets-writer.js';
import { isPlainObject } from '../plain-object.js';

/** A provider body's keys: the config's provider keys (the router's list), and `name`. */
const PROVIDER_FIELDS = ['name', ...PROVIDER_KEYS];
/** Read-only fields a GET returns; ignored when sent back. */
const READ_ONLY_FIELDS = ['built_in', 'api_key_set', 'api_key_env', 'used_by', 'version'];

export interface ProviderWrite {
  /** The YAML value. */
  readonly yaml: Record<string, unknown>;
  /** Literal credentials to store in the secrets file: variable name → value (empty when none). */
  readonly secrets: ReadonlyMap<string, string>;
  /** What went to the secrets file, for the log line (`api key`, `header Authorization`): names, never values. */
  readonly stored: readonly string[];
}


export function isBuiltInProvider(name: string): boolean {
  return Object.hasOwn(BUILT_IN_PROVIDERS, name);
}

/** Checks a provider body for unknown fields; returns its fields without the read-only ones. */
export function providerFieldsFromBody(body: unknown, name: string): Record<string, unknown> {
  if (!isPlainObject(body)) throw new AdminFailure('invalid_request', 'The body must be a JSON object describing the provider.');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (READ_ONLY_FIELDS.includes(key)) continue;
    if (!PROVIDER_FIELDS.includes(key)) {
      throw new AdminFailure('unknown_field', `Unknown field "${key.slice(0, 100)}" (allowed: ${PROVIDER_FIELDS.join(', ')}).`, { param: key.slice(0, 100) });
    }
    if (key === 'name') {
      checkBodyName(value, name);
      continue;
    }
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * The YAML value of a provider (keys in the config reference's order) and the
 * credentials to store in the secrets file: its literal `api_key` and the
 * literal values of its credential headers (see secrets-writer.ts). A new
 * secret's variable avoids `inUse` (what the rest of the config refers to:
 * variablesInUse) and whatever this provider keeps referring to.
 */
export function providerWrite(name: string, fields: Record<string, unknown>, inUse: ReadonlySet<string> = new Set()): ProviderWrite {
  const taken = new Set([...inUse, ...variablesInUse(fields, name)]);
  const secrets = new Map<string, string>();
  const stored: string[] = [];
  const keep = (what: string, result: StoredKey, param: string): string => {
    if (result.kind === 'invalid') throw new AdminFailure('invalid_request', result.reason, { param });
    if (result.kind === 'secret') {
      secrets.set(result.name, result.value);
      taken.add(result.name);
      stored.push(what);
    }
    return result.yaml;
  };
  const yaml: Record<string, unknown> = {};
  for (const key of PROVIDER_FIELDS) {
    const value = fields[key];
    if (key === 'name' || value === undefined) continue;
    if (key === 'api_key') {
      if (typeof value !== 'string') throw new AdminFailure('invalid_type', 'api_key must be a string.', { param: 'api_key' });
      yaml.api_key = keep('api key', storeApiKey(name, value, taken), 'api_key');
    } else if (key === 'headers' && isPlainObject(value)) {
      const listed = Array.isArray(fields.secret_headers) ? fields.secret_headers.filter((h): h is string => typeof h === 'string') : [];
      yaml.headers = Object.fromEntries(
        Object.entries(value).map(([header, text]) =>
          // Anything else (a number, a name the loader refuses) goes to the loader as sent, which answers 422.
          typeof text === 'string' && isCredentialHeader(header, listed)
            ? [header, keep(`header ${header}`, storeCredentialHeader(name, header, text, taken), `headers.${header.slice(0, 100)}`)]
            : [header, text],
        ),
      );
    } else {
      yaml[key] = value;
    }
  }
  return { yaml, secrets, stored };
}

/** Header values that are not one `${VAR}` / `${VAR:-default}` reference are shown as `<redacted>` (they may carry tokens). */
function redactHeaders(headers: unknown): unknown {
  if (!isPlainObject(headers)) return headers;
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, typeof v === 'string' && envReferenceName(v) !== undefined ? v : '<redacted>']));
}

/** A base URL as GET shows it: user info and query values hidden (a key may sit in `?api_key=`). */
function shownUrl(url: unknown): unknown {
  return typeof url === 'string' ? redactUrl(url) : (url ?? null);
}

/** What GET returns for a provider: the effective type and URL, the file's own fields, never the key. */
export function providerView(name: string, raw: unknown, loaded: ProviderConfig | undefined, usedBy: readonly string[]): Record<string, unknown> {
  const own = isPlainObject(raw) ? raw : {};
  const keyText = typeof own.api_key === 'string' ? own.api_key : (BUILT_IN_PROVIDERS[name]?.api_key ?? undefined);
  return {
    name,
    built_in: isBuiltInProvider(name),
    type: loaded?.type ?? own.type ?? null,
    base_url: shownUrl(loaded?.baseUrl ?? own.base_url),
    api_key_set: loaded?.apiKey !== undefined,
    api_key_env: keyText === undefined ? null : (envReferenceName(keyText) ?? null),
    api_key_required: loaded?.requiresApiKey ?? null,
    check_models: loaded?.checkModels ?? false,
    propagate_trace: loaded?.propagateTrace ?? BUILT_IN_PROVIDERS[name]?.propagate_trace ?? true,
    ...(own.options === undefined ? {} : { options: own.options }),
    ...(own.headers === undefined ? {} : { headers: redactHeaders(own.headers) }),
    ...(own.settings === undefined ? {} : { settings: own.settings }),
    ...(own.price === undefined ? {} : { price: own.price }),
    ...(own.unsupported_parameters === undefined ? {} : { unsupported_parameters: own.unsupported_parameters }),
    used_by: usedBy,
  };
}
