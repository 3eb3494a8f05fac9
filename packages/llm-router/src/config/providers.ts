import type { ProviderConfig, ProviderType, Settings } from '../types.js';
import { BUILT_IN_PROVIDERS } from './built-in-providers.js';
import { defaultSettingsFor } from './defaults.js';
import { interpolateDeep } from './interpolate.js';
import { readPrice } from './price.js';
import { readConcurrency } from './concurrency.js';
import { readRateLimits } from './rate-limits.js';
import { credentialValues, readHeaders, readSecretHeaders } from './provider-headers.js';
import { rememberApiKeyVariables } from './provider-status.js';
import type { ConfigReader, RawMap } from './reader.js';
import { PROVIDER_KEYS, PROVIDER_NAME, PROVIDER_TYPES } from './schema.js';

/**
 * Builds every provider: the built-ins, overlaid field by field with the file's
 * `providers:` entries (so `groq: { api_key: "${MY_GROQ}" }` keeps Groq's URL),
 * plus any new OpenAI-compatible or Ollama servers the file adds.
 */
export function buildProviders(
  reader: ConfigReader,
  section: unknown,
  globalSettings: Partial<Settings>,
): Map<string, ProviderConfig> {
  const declared = section === undefined || section === null ? {} : reader.map(section, ['providers'], 'providers');
  const names = new Set([...Object.keys(BUILT_IN_PROVIDERS), ...Object.keys(declared)]);
  const providers = new Map<string, ProviderConfig>();
  for (const name of names) {
    const path = ['providers', name];
    if (!PROVIDER_NAME.test(name) || name === 'mana') {
      reader.fail(path, `provider name "${name}" must be lowercase letters, digits, - or _ (and not "mana", the alias namespace)`, undefined, true);
    }
    const own = declared[name] === undefined || declared[name] === null ? {} : reader.map(declared[name], path, `provider ${name}`);
    reader.keys(own, PROVIDER_KEYS, path, `provider ${name}`);
    const builtIn = BUILT_IN_PROVIDERS[name] as RawMap | undefined;
    providers.set(name, buildProvider(reader, name, { ...builtIn, ...own }, path, globalSettings));
  }
  return providers;
}

function buildProvider(
  reader: ConfigReader,
  name: string,
  raw: RawMap,
  path: readonly string[],
  globalSettings: Partial<Settings>,
): ProviderConfig {
  const what = `provider ${name}`;
  if (raw.type === undefined) reader.fail(path, `${what} needs a type (${PROVIDER_TYPES.join(' or ')})`, undefined, true);
  const type = reader.string(raw.type, [...path, 'type'], `${what} type`);
  if (!PROVIDER_TYPES.includes(type.value as ProviderType)) {
    reader.fail([...path, 'type'], `${what} has unknown type "${reader.shown(raw.type, type)}" (known: ${PROVIDER_TYPES.join(', ')})`);
  }
  if (raw.base_url === undefined) reader.fail(path, `${what} needs a base_url`, undefined, true);
  const baseUrl = readBaseUrl(reader, raw.base_url, [...path, 'base_url'], what);

  // A key is needed exactly when one is written (`api_key: ${VAR}`, as the
  // built-in cloud providers do): a local server configured without one is
  // called without an Authorization header, never reported "unconfigured".
  const keyWritten = raw.api_key !== undefined && raw.api_key !== null;
  const key = keyWritten ? reader.string(raw.api_key, [...path, 'api_key'], `${what} api_key`) : undefined;
  const requiresApiKey =
    raw.api_key_required === undefined ? keyWritten : reader.boolean(raw.api_key_required, [...path, 'api_key_required'], `${what} api_key_required`);
  const checkModels = raw.check_models === undefined ? false : reader.boolean(raw.check_models, [...path, 'check_models'], `${what} check_models`);
  // The built-in cloud providers write `false` (built-in-providers.ts); a file's own value wins.
  const propagateTrace =
    raw.propagate_trace === undefined ? true : reader.boolean(raw.propagate_trace, [...path, 'propagate_trace'], `${what} propagate_trace`);
  const options = raw.options === undefined || raw.options === null ? {} : reader.map(raw.options, [...path, 'options'], `${what} options`);
  const headers = readHeaders(reader, raw.headers, [...path, 'headers'], what);
  // The admin API's writer reads the list from the file itself (see provider-headers.ts); here it names secrets to redact.
  const secretHeaders = readSecretHeaders(reader, raw.secret_headers, [...path, 'secret_headers'], what);
  const settings: Settings = Object.freeze({
    ...defaultSettingsFor(type.value as ProviderType),
    ...globalSettings,
    ...reader.settings(raw.settings, [...path, 'settings']),
  });

  const apiKey = key === undefined || key.value.trim() === '' ? undefined : key.value.trim();
  const provider: ProviderConfig = Object.freeze({
    name,
    type: type.value as ProviderType,
    baseUrl,
    apiKey,
    requiresApiKey,
    options: Object.freeze(interpolateDeep(options, reader.env) as Record<string, unknown>),
    checkModels,
    headers,
    secrets: credentialValues(apiKey, headers, secretHeaders),
    settings,
    price: readPrice(reader, raw.price, [...path, 'price'], what),
    unsupportedParameters: readParameterNames(reader, raw.unsupported_parameters, [...path, 'unsupported_parameters'], what),
    propagateTrace,
    concurrency: readConcurrency(reader, raw.max_concurrency, [...path, 'max_concurrency'], 'provider', name, undefined),
    rates: readRateLimits(reader, raw, path, 'provider', name, undefined),
  });
  rememberApiKeyVariables(provider, key?.variables ?? []);
  return provider;
}

/**
 * `base_url`: an http(s) URL. Its query string is kept and sent on every call
 * (Azure-style `?api-version=…`, see adapters/http.ts). User info
 * (`user:password@`) is refused rather than silently dropped: a password in a
 * URL would travel into logs and views that show the URL; basic auth goes in
 * `headers`. A `#fragment` is never sent by HTTP, so it is refused too. The
 * messages never quote the URL: it may hold an interpolated secret.
 */
function readBaseUrl(reader: ConfigReader, value: unknown, path: readonly string[], what: string): string {
  const text = reader.string(value, path, `${what} base_url`).value.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return reader.fail(path, `${what} base_url must be an http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') reader.fail(path, `${what} base_url must be an http(s) URL`);
  if (url.username !== '' || url.password !== '') {
    reader.fail(
      path,
      `${what} base_url must not contain a user name or password (user:password@host): ` +
        `send credentials with api_key or headers (e.g. Authorization: "Basic \${BASIC_AUTH}")`,
    );
  }
  if (url.hash !== '') reader.fail(path, `${what} base_url must not contain a #fragment`);
  // Trailing slashes of the path only; the query string (if any) is kept as written.
  url.pathname = url.pathname.replace(/\/+$/, '');
  const normalized = url.href;
  return url.search === '' && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

/** A chat request parameter's name, as OpenAI writes them (`reasoning_effort`, `top_logprobs`). */
const PARAMETER_NAME = /^[a-z][a-z0-9_]*$/;

/** `unsupported_parameters`: a list of chat request parameter names. */
function readParameterNames(reader: ConfigReader, value: unknown, path: readonly string[], what: string): readonly string[] {
  if (value === undefined || value === null) return Object.freeze([]);
  const wanted = `${what} unsupported_parameters must be a list of chat request parameter names (e.g. [reasoning_effort])`;
  if (!Array.isArray(value)) reader.fail(path, wanted);
  return Object.freeze(
    value.map((entry, index) => {
      if (typeof entry !== 'string' || !PARAMETER_NAME.test(entry) || entry === 'messages' || entry === 'model') return reader.fail([...path, index], wanted);
      return entry;
    }),
  );
}
