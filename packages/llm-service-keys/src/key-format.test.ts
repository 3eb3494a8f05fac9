import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { KEY_LENGTH, digestOfKey, newKey, parseKey } from './key-format.js';

describe('key format', () => {
  it('a new key reads mk-<12 hex>_<43 base64url> and parses back to its id and secret', () => {
    const { id, secret, key } = newKey();
    expect(key).toMatch(/^mk-[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(key).toHaveLength(KEY_LENGTH);
    expect(parseKey(key)).toEqual({ id, secret });
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
  });

  it('ids and secrets do not repeat over 10,000 keys', () => {
    const keys = Array.from({ length: 10_000 }, () => newKey());
    expect(new Set(keys.map((k) => k.id)).size).toBe(10_000);
    expect(new Set(keys.map((k) => k.secret)).size).toBe(10_000);
  });

  it('a rotation keeps the id and changes the secret', () => {
    const first = newKey();
    const second = newKey(first.id);
    expect(second.id).toBe(first.id);
    expect(second.secret).not.toBe(first.secret);
    expect(() => newKey('NOT-AN-ID')).toThrow(TypeError);
  });

  it('the digest is the SHA-256 of the whole key in hex (what a bearer check hashes), never the secret', () => {
    const { secret, key } = newKey();
    const digest = digestOfKey(key);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(digest).toBe(createHash('sha256').update(key).digest('hex'));
    expect(digest).not.toContain(secret);
  });

  it('refuses malformed keys of every kind', () => {
    const good = newKey().key;
    const malformed = [
      '',
      'mk-',
      'x'.repeat(10_000),
      `${good}x`,
      good.slice(0, -1),
      good.replace('mk-', 'sk-'),
      good.replace('mk-', 'MK-'),
      good.toUpperCase(),
      `mk-${'G'.repeat(12)}_${'a'.repeat(43)}`,
      `mk-${'a'.repeat(12)}-${'a'.repeat(43)}`,
      `mk-${'a'.repeat(12)}_${'a'.repeat(42)}é`,
      `mk-${'a'.repeat(12)}_${'a'.repeat(41)}🔑`,
      `mk-${'a'.repeat(12)}_${'a'.repeat(42)}=`,
      `mk-${'a'.repeat(12)}_${'a'.repeat(42)}\n`,
      ` ${good.slice(1)}`,
    ];
    for (const key of malformed) expect(parseKey(key), JSON.stringify(key.slice(0, 80))).toBeUndefined();
    expect(parseKey(undefined as unknown as string)).toBeUndefined();
  });
});
