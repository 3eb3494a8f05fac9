/**
 * A provider's `headers:` and `secret_headers:`.
 *
 * Names and values are checked at load, with the line, against what the HTTP
 * client (undici) will send: it refuses a name that is not an HTTP token, a
 * value holding CR, LF or another control character, and the framing and
 * connection headers it manages itself. A config that passed here would
 * otherwise fail every call with UND_ERR_INVALID_ARG (or, for
 * Content-Length, send a wrong length). Values are checked after `${VAR}`
 * expansion; messages never quote them, since a value may be a token.
 *
 * Some headers carry credentials, as `api_key` does: the well-known ones
 * (CREDENTIAL_HEADERS) and any a provider lists in `secret_headers`. The
 * gateway's admin API stores their literal values in the secrets file, never
 * in the YAML (see isCredentialHeader).
 */
import type { ConfigPath } from './config-source.js';
import type { ConfigReader } from './reader.js';

/** Header names that carry a credential wherever they are sent (compared case-insensitively). */
export const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key'];

/** Headers the HTTP client sets or refuses itself: framing (Content-Length, Transfer-Encoding) and the connection. */
const CLIENT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect']);

/** An HTTP field name: a token (RFC 9110 §5.6.2). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A field value undici sends: tab, space, visible ASCII and obs-text bytes; no CR, LF or other control character. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Whether header `name` carries a credential: a well-known one, or one the provider lists in `secret_headers`. */
export function isCredentialHeader(name: string, secretHeaders: readonly string[] = []): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_HEADERS.includes(lower) || secretHeaders.some((listed) => listed.toLowerCase() === lower);
}

/** A header name as a message may quote it: at most 100 characters, control characters shown as `?`. */
function quoted(name: string): string {
  return JSON.stringify(name.slice(0, 100).replace(/[\x00-\x1f\x7f]/g, '?'));
}

function checkName(reader: ConfigReader, name: string, path: ConfigPath, what: string): void {
  if (!HEADER_NAME.test(name)) {
    reader.fail(path, `${what} header name ${quoted(name)} is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only)`, undefined, true);
  }
}

/** `headers:` → name → value, `${VAR}` expanded, each checked as the HTTP client will check it. */
export function readHeaders(reader: ConfigReader, value: unknown, path: ConfigPath, what: string): Readonly<Record<string, string>> {
  if (value === undefined || value === null) return Object.freeze({});
  const map = reader.map(value, path, `${what} headers`);
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries(map)) {
    const at = [...path, name];
    checkName(reader, name, at, what);
    if (CLIENT_HEADERS.has(name.toLowerCase())) {
      reader.fail(at, `${what} header ${name} is set by the gateway itself (the HTTP client manages framing and connections): remove it`, undefined, true);
    }
    const text = reader.string(raw, at, `${what} header ${name}`).value;
    if (!HEADER_VALUE.test(text)) {
      reader.fail(at, `${what} header ${name} must be one line of printable characters (no CR, LF or other control characters)`);
    }
    headers[name] = text;
  }
  return Object.freeze(headers);
}

/** An auth scheme in front of a token (`Bearer sk-…`, `Basic …`): the token alone is a secret too. */
const AUTH_SCHEME = /^[A-Za-z][A-Za-z0-9-]*\s+(\S.*)$/;

/**
 * The credentials a provider sends: its API key and the values of its
 * credential headers, with and without an auth scheme — what error text is
 * redacted against before it is relayed, logged or shown.
 */
export function credentialValues(
  apiKey: string | undefined,
  headers: Readonly<Record<string, string>>,
  secretHeaders: readonly string[],
): readonly string[] {
  const values = new Set<string>();
  if (apiKey !== undefined) values.add(apiKey);
  for (const [name, value] of Object.entries(headers)) {
    if (!isCredentialHeader(name, secretHeaders) || value.trim() === '') continue;
    values.add(value.trim());
    const token = AUTH_SCHEME.exec(value.trim())?.[1];
    if (token !== undefined) values.add(token);
  }
  return Object.freeze([...values]);
}

/** `secret_headers:` → the header names a provider marks as credentials (beyond CREDENTIAL_HEADERS). */
export function readSecretHeaders(reader: ConfigReader, value: unknown, path: ConfigPath, what: string): readonly string[] {
  if (value === undefined || value === null) return Object.freeze([]);
  if (!Array.isArray(value)) reader.fail(path, `${what} secret_headers must be a list of header names`);
  return Object.freeze(
    value.map((entry, index) => {
      if (typeof entry !== 'string') return reader.fail([...path, index], `${what} secret_headers must be a list of header names`);
      checkName(reader, entry, [...path, index], what);
      return entry;
    }),
  );
}
