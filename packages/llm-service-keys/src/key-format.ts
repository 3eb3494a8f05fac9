/**
 * The format of a service key: `mk-<id>_<secret>`.
 *
 * - `mk-` makes a leaked key recognisable to a secret scanner;
 * - `<id>` (12 lowercase hex digits) is the key's stable public id: a leaked
 *   key can be traced to its record without revealing anything secret, and a
 *   check finds its record with one map lookup instead of hashing against all;
 * - `<secret>` is 32 bytes from `crypto.randomBytes` in base64url (43 chars).
 *
 * Only a SHA-256 digest is ever stored: that of the whole key string
 * (`digestOfKey`), which is exactly what the gateway's key check computes of
 * a presented bearer token, once, for every source of keys (http/api-caller.ts):
 * a service key is then found by that digest with no second hash.
 *
 * base64url contains `_` and `-`, so the parser splits by position, not by
 * separator: the id has a fixed length and the secret follows the one `_`.
 */
import { hash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'mk-';
/** Hex digits of a key id: 48 random bits, so ids do not collide among millions of keys. */
export const KEY_ID_LENGTH = 12;
/** Random bytes of a secret (256 bits). */
export const SECRET_BYTES = 32;
/** base64url characters of a secret: ceil(32 * 4 / 3), no padding. */
export const SECRET_LENGTH = 43;
/** The length of every key this format produces; anything else is refused before any parsing. */
export const KEY_LENGTH = KEY_PREFIX.length + KEY_ID_LENGTH + 1 + SECRET_LENGTH;

export const KEY_ID = /^[0-9a-f]{12}$/;
const KEY = /^mk-([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface ParsedKey {
  readonly id: string;
  readonly secret: string;
}

export interface NewKey extends ParsedKey {
  /** The whole key as the caller presents it: shown once, never stored. */
  readonly key: string;
}

/** The id and secret of a presented key, or undefined for anything not in the format (any length, any characters). */
export function parseKey(presented: string): ParsedKey | undefined {
  // Checked first so a 10 kB header costs one comparison, not a regex scan.
  if (typeof presented !== 'string' || presented.length !== KEY_LENGTH) return undefined;
  const match = KEY.exec(presented);
  return match === null ? undefined : { id: match[1]!, secret: match[2]! };
}

export function isKeyId(value: string): boolean {
  return KEY_ID.test(value);
}

export function newKeyId(): string {
  return randomBytes(KEY_ID_LENGTH / 2).toString('hex');
}

/** A fresh key for `id` (a new key, or a rotation of an existing one). */
export function newKey(id: string = newKeyId()): NewKey {
  if (!isKeyId(id)) throw new TypeError('A key id is 12 lowercase hex digits.');
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { id, secret, key: `${KEY_PREFIX}${id}_${secret}` };
}

/** The stored form of a key: the SHA-256 of the whole `mk-<id>_<secret>` string, as 64 hex digits. */
export function digestOfKey(key: string): string {
  return hash('sha256', key, 'hex');
}
