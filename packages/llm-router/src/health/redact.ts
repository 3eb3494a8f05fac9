/**
 * Redaction of what is shown. Error text from upstreams and sockets ends up in
 * /v1/health, logs and events: strip anything that looks like a credential
 * before it is shown (the known keys of the current config, bearer tokens,
 * `key=` query parameters). A base URL shown by a view hides its user info
 * and query values (redactUrl).
 */
import { secretSpellings } from './secret-spellings.js';

const MAX_LENGTH = 500;
const REDACTED = '[redacted]';

export function redactSecrets(text: string, secrets: Iterable<string | undefined> = []): string {
  let result = text;
  for (const secret of secrets) {
    // Very short "keys" would blank out ordinary words; real keys are long.
    if (secret !== undefined && secret.length >= 6) result = result.replace(secretSpellings(secret), REDACTED);
  }
  result = result
    .replace(/\b(bearer\s+)[^\s"',;]+/gi, '$1[redacted]')
    .replace(/\b((?:api[_-]?key|access[_-]?token|token|key)=)[^&\s"',;]+/gi, '$1[redacted]');
  return result.length > MAX_LENGTH ? `${result.slice(0, MAX_LENGTH)}…` : result;
}

/**
 * An upstream's error body as the client may see it: our own credentials
 * (`secrets`, at least 4 characters) taken out of what any reader would get,
 * not only out of the bytes. A JSON body is decoded, every string in it (keys
 * too) scrubbed, and re-encoded when something was taken out — a key the
 * upstream wrote with escapes would come back whole from any JSON parser, and
 * a route that re-states the error in its own shape would print it plainly.
 * What is left (a body that is not JSON, a number spelling the key) is
 * scrubbed for every JSON spelling of each secret (secret-spellings.ts).
 */
export function scrubErrorBody(body: string, secrets: readonly string[]): string {
  const usable = secrets.filter((secret) => secret.length >= 4);
  if (usable.length === 0) return body;
  let text = body;
  const decoded = parseJson(body);
  if (decoded.ok) {
    const scrubbed = { changed: false };
    try {
      const clean = scrubValue(decoded.value, usable, scrubbed);
      if (scrubbed.changed) text = JSON.stringify(clean);
    } catch {
      // Nesting too deep to walk: the text pass below still runs.
    }
  }
  for (const secret of usable) text = text.replace(secretSpellings(secret), REDACTED);
  return text;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function scrubValue(value: unknown, secrets: readonly string[], state: { changed: boolean }): unknown {
  if (typeof value === 'string') return scrubString(value, secrets, state);
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, secrets, state));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[scrubString(key, secrets, state)] = scrubValue(item, secrets, state);
    return out;
  }
  return value;
}

function scrubString(text: string, secrets: readonly string[], state: { changed: boolean }): string {
  let result = text;
  for (const secret of secrets) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  if (result !== text) state.changed = true;
  return result;
}

/** What a hidden part of a URL shows as. */
const HIDDEN = '<redacted>';

/**
 * A URL as a view may show it (a provider's base URL in the admin API, the
 * LiteLLM routes, the config text and its history): user info and every query
 * value hidden, names and the rest kept —
 * `https://u:p@h/v1?api-version=1&key=sk` → `https://<redacted>@h/v1?api-version=<redacted>&key=<redacted>`.
 * Text, not a parsed URL, so it works on a value as written (`?key=${KEY}`)
 * as well as on an expanded one. The one function for every place that shows
 * a base URL, so they cannot disagree about what is hidden.
 */
export function redactUrl(url: string): string {
  const hashAt = url.indexOf('#');
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : `#${HIDDEN}`;
  const queryAt = beforeHash.indexOf('?');
  const address = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const query = queryAt === -1 ? '' : beforeHash.slice(queryAt + 1);
  const shownQuery =
    queryAt === -1
      ? ''
      : `?${query
          .split('&')
          .map((part) => {
            if (part === '') return part;
            const eq = part.indexOf('=');
            return eq === -1 ? HIDDEN : `${part.slice(0, eq)}=${HIDDEN}`;
          })
          .join('&')}`;
  return `${withoutUserInfo(address)}${shownQuery}${fragment}`;
}

/** `scheme://user:pw@host/path` → `scheme://<redacted>@host/path` (the authority ends at the first `/`). */
function withoutUserInfo(address: string): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(address)?.[0];
  if (scheme === undefined) return address;
  const slash = address.indexOf('/', scheme.length);
  const authorityEnd = slash === -1 ? address.length : slash;
  const at = address.lastIndexOf('@', authorityEnd - 1);
  if (at < scheme.length) return address;
  return `${scheme}${HIDDEN}${address.slice(at)}`;
}
