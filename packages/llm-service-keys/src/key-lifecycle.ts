/**
 * The two moments a secret is made: a new key and a rotation. Each returns
 * the record to store (digests only) and the key to show once.
 */
import { digestOfKey, newKey } from './key-format.js';
import type { KeyDigests, KeySettings, StoredServiceKey } from './key-record.js';

/** The rotation grace when the admin names none: 24 h. */
export const DEFAULT_ROTATION_GRACE_MS = 86_400_000; // 24 h
/** The longest grace a rotation accepts: 30 days (a leaked old secret should not live on for months). */
export const MAX_ROTATION_GRACE_MS = 30 * 86_400_000; // 30 d

export interface IssuedKey {
  readonly record: StoredServiceKey;
  /** `mk-<id>_<secret>`: to show once, never to store or log. */
  readonly key: string;
}

/** A new key with `settings`, created at `now`. */
export function issueKey(settings: KeySettings, now: number): IssuedKey {
  const fresh = newKey();
  return {
    record: {
      ...settings,
      id: fresh.id,
      createdAt: now,
      lastUsedAt: null,
      digests: { current: digestOfKey(fresh.key), previous: null, previousValidUntil: null },
    },
    key: fresh.key,
  };
}

/**
 * `key` with a new secret at `now`; the current secret stays accepted for
 * `graceMs` (0: refused at once). A secret still in grace from an earlier
 * rotation is dropped: only the newest two secrets are ever accepted.
 */
export function rotateKey(key: StoredServiceKey, graceMs: number, now: number): IssuedKey {
  if (!(Number.isInteger(graceMs) && graceMs >= 0 && graceMs <= MAX_ROTATION_GRACE_MS)) throw new RangeError(`A grace is 0 to ${MAX_ROTATION_GRACE_MS} ms.`);
  const fresh = newKey(key.id);
  const digests: KeyDigests =
    graceMs === 0
      ? { current: digestOfKey(fresh.key), previous: null, previousValidUntil: null }
      : { current: digestOfKey(fresh.key), previous: key.digests.current, previousValidUntil: now + graceMs };
  return { record: { ...key, digests }, key: fresh.key };
}
