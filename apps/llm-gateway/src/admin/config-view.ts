/**
 * GET /admin/config: the file's text as it is on disk — except a key someone
 * wrote into it by hand: a provider `api_key` or header value that is not
 * one `${VAR}` / `${VAR:-default}` reference (the router's `envReferenceName`)
 * is shown as `<redacted>`, and a `base_url` shows its user info and query
 * values as `<redacted>` (the router's `redactUrl`, as every view of a base
 * URL does). No response carries a key.
 */
import { envReferenceName, redactUrl } from '@mana/llm-router';
import { isMap, isScalar, parseDocument } from 'yaml';

const REDACTED = '<redacted>';

function secretLike(value: unknown): boolean {
  return typeof value === 'string' ? envReferenceName(value) === undefined && value !== '' : value !== null && value !== undefined;
}

export function redactedConfigText(text: string): string {
  const document = parseDocument(text);
  const providers = document.get('providers', true);
  if (document.errors.length > 0 || !isMap(providers)) return text;
  let redacted = false;
  for (const pair of providers.items) {
    if (!isMap(pair.value)) continue;
    const key = pair.value.get('api_key', true);
    if (isScalar(key) && secretLike(key.value)) {
      key.value = REDACTED;
      redacted = true;
    }
    const url = pair.value.get('base_url', true);
    if (isScalar(url) && typeof url.value === 'string' && redactUrl(url.value) !== url.value) {
      url.value = redactUrl(url.value);
      redacted = true;
    }
    const headers = pair.value.get('headers', true);
    if (!isMap(headers)) continue;
    for (const header of headers.items) {
      if (isScalar(header.value) && secretLike(header.value.value)) {
        header.value.value = REDACTED;
        redacted = true;
      }
    }
  }
  // Re-printed only when something was hidden; otherwise the bytes are the file's.
  return redacted ? document.toString({ lineWidth: 0 }) : text;
}
