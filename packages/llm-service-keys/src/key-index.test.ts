import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { settingsFromCreate } from './key-fields.js';
import { KeyIndex } from './key-index.js';
import { issueKey, rotateKey } from './key-lifecycle.js';
import { serviceKeyJson } from './key-record.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const H = 3_600_000;

function issued(body: Record<string, unknown> = {}, now = T0) {
  return issueKey(settingsFromCreate({ name: 'svc', ...body }), now);
}

describe('KeyIndex', () => {
  it('finds a key by its full key string, and nothing by a wrong secret, an unknown id or a malformed string', () => {
    const a = issued({ name: 'a' });
    const b = issued({ name: 'b' });
    const index = new KeyIndex([a.record, b.record]);
    expect(index.lookup(a.key, T0)?.name).toBe('a');
    expect(index.lookup(b.key, T0)?.name).toBe('b');
    // a's id with b's secret
    expect(index.lookup(`${a.key.slice(0, 16)}${b.key.slice(16)}`, T0)).toBeUndefined();
    const unknown = issued({ name: 'c' });
    expect(index.lookup(unknown.key, T0)).toBeUndefined();
    for (const bad of ['', 'x'.repeat(10_240), a.key.replace('mk-', 'sk-'), `${a.key.slice(0, -1)}ü`, `Bearer ${a.key}`]) {
      expect(index.lookup(bad, T0)).toBeUndefined();
    }
  });

  it('1,000 keys: each finds itself, none finds another', () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => issued({ name: `svc-${i}` }));
    const index = new KeyIndex(keys.map((k) => k.record));
    expect(index.size).toBe(1_000);
    for (const [i, k] of keys.entries()) expect(index.lookup(k.key, T0)?.name).toBe(`svc-${i}`);
    const strangers = Array.from({ length: 1_000 }, () => issued());
    for (const k of strangers) expect(index.lookup(k.key, T0)).toBeUndefined();
    expect(index.all().map((k) => k.name)).toHaveLength(1_000);
  });

  it('a disabled or expired key answers as unknown', () => {
    const disabled = issued({ name: 'off', disabled: true });
    const expiring = issued({ name: 'exp', expires_at: new Date(T0 + H).toISOString() });
    const index = new KeyIndex([disabled.record, expiring.record]);
    expect(index.lookup(disabled.key, T0)).toBeUndefined();
    expect(index.lookup(expiring.key, T0 + H - 1)?.name).toBe('exp');
    expect(index.lookup(expiring.key, T0 + H)).toBeUndefined();
  });

  it('after a rotation the old secret works until the grace ends, then only the new one', () => {
    const first = issued();
    const index = new KeyIndex([first.record]);
    const second = rotateKey(first.record, 24 * H, T0 + H);
    index.set(second.record);
    expect(second.key.slice(0, 16)).toBe(first.key.slice(0, 16));
    expect(index.lookup(first.key, T0 + H)?.id).toBe(first.record.id);
    expect(index.lookup(second.key, T0 + H)?.id).toBe(first.record.id);
    expect(index.lookup(first.key, T0 + 25 * H - 1)).toBeDefined();
    expect(index.lookup(first.key, T0 + 25 * H)).toBeUndefined();
    expect(index.lookup(second.key, T0 + 25 * H)).toBeDefined();
    expect(serviceKeyJson(second.record, T0 + H).previous_secret_valid_until).toBe(new Date(T0 + 25 * H).toISOString());
    expect(serviceKeyJson(second.record, T0 + 25 * H).previous_secret_valid_until).toBeNull();
  });

  it('a rotation with grace 0 refuses the old secret at once; a second rotation drops the first secret', () => {
    const first = issued();
    const index = new KeyIndex([first.record]);
    const second = rotateKey(first.record, 0, T0);
    index.set(second.record);
    expect(index.lookup(first.key, T0)).toBeUndefined();
    expect(index.lookup(second.key, T0)).toBeDefined();

    const third = rotateKey(second.record, H, T0);
    const fourth = rotateKey(third.record, H, T0);
    index.set(fourth.record);
    expect(index.lookup(second.key, T0)).toBeUndefined();
    expect(index.lookup(third.key, T0)).toBeDefined();
    expect(index.lookup(fourth.key, T0)).toBeDefined();
    expect(() => rotateKey(first.record, -1, T0)).toThrow(RangeError);
  });

  it('delete, replaceAll, named', () => {
    const a = issued({ name: 'a' });
    const b = issued({ name: 'b' }, T0 + 1);
    const index = new KeyIndex([b.record, a.record]);
    expect(index.all().map((k) => k.name)).toEqual(['a', 'b']);
    expect(index.named('a')?.id).toBe(a.record.id);
    expect(index.named('a', a.record.id)).toBeUndefined();
    expect(index.delete(a.record.id)).toBe(true);
    expect(index.lookup(a.key, T0)).toBeUndefined();
    index.replaceAll([a.record]);
    expect(index.lookup(b.key, T0)).toBeUndefined();
    expect(index.lookup(a.key, T0)?.name).toBe('a');
  });

  it('callerOf finds a key by the SHA-256 of the presented token: one frozen caller per key version, with its policy', () => {
    const a = issued({ name: 'a', aliases: ['mana/fast-text'], priority: 'background', max_concurrency: 2 });
    const index = new KeyIndex([a.record]);
    const sha = (token: string) => createHash('sha256').update(token).digest();
    const caller = index.callerOf(sha(a.key), T0);
    expect(caller).toMatchObject({ id: a.record.id, name: 'a', policy: { priority: 'background', maxConcurrency: 2 } });
    expect(caller?.policy.aliases?.has('mana/fast-text')).toBe(true);
    expect(Object.isFrozen(caller)).toBe(true);
    expect(index.callerOf(sha(a.key), T0)).toBe(caller);
    expect(index.callerOf(sha(`${a.key}x`), T0)).toBeUndefined();
    expect(index.callerOf(Buffer.alloc(5), T0)).toBeUndefined();
    expect(JSON.stringify(caller)).not.toContain(a.record.digests.current);
  });

  it('nextChange is the next expiry or grace end after now', () => {
    const a = issued({ name: 'a', expires_at: new Date(T0 + 5 * H).toISOString() });
    const b = rotateKey(issued({ name: 'b' }).record, 2 * H, T0);
    const index = new KeyIndex([a.record, b.record]);
    expect(index.nextChange(T0)).toBe(T0 + 2 * H);
    expect(index.nextChange(T0 + 2 * H)).toBe(T0 + 5 * H);
    expect(index.nextChange(T0 + 5 * H)).toBe(Infinity);
  });

  it('the public view carries no digest and no secret', () => {
    const k = issued({ name: 'svc', aliases: ['mana/fast-text'] });
    const json = JSON.stringify(serviceKeyJson(k.record, T0));
    expect(json).not.toContain(k.record.digests.current);
    expect(json).not.toContain(k.key.slice(16));
    expect(JSON.parse(json)).toEqual({
      id: k.record.id,
      name: 'svc',
      description: null,
      created_at: new Date(T0).toISOString(),
      last_used_at: null,
      expires_at: null,
      disabled: false,
      aliases: ['mana/fast-text'],
      priority: null,
      max_concurrency: null,
      previous_secret_valid_until: null,
    });
  });
});
