/**
 * The one way a key becomes a fingerprint: `k:` + 12 hex chars of the key's
 * SHA-256. Usage records and the admin API's `config written` log lines both
 * use it, so the same key can be followed from one to the other; the
 * fingerprint tells keys apart and cannot be turned back into a key.
 */
import { createHash } from 'node:crypto';
import { bearerToken } from './auth.js';

export function fingerprintOfKey(key: string): string {
  return `k:${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

/** Fingerprints of the Authorization values seen lately: a SHA-256 per request is most of what building a usage record costs. */
const remembered = new Map<string, string>();
const MAX_REMEMBERED_KEYS = 1_024; // beyond this the memo starts over: a bound, whatever clients send

/**
 * The fingerprint of the key in an `Authorization: Bearer <key>` header, or null
 * without one. Read as the API-key check reads it (any case of `Bearer`, extra
 * spaces), so every request the check admits is attributed to its key. Called per request.
 */
export function fingerprintOfAuthorization(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const known = remembered.get(authorization);
  if (known !== undefined) return known;
  const key = bearerToken(authorization);
  if (key === undefined) return null;
  const fingerprint = fingerprintOfKey(key);
  if (remembered.size >= MAX_REMEMBERED_KEYS) remembered.clear();
  remembered.set(authorization, fingerprint);
  return fingerprint;
}
