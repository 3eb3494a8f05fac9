/**
 * ServiceKeys as the key check's source of callers, on a real SQLite file
 * with an injected clock: what a key's digest answers, and when the epoch
 * moves (every change, and the moment an expiry or a grace end passes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueKey, rotateKey, settingsFromCreate } from '@mana/llm-service-keys';
import { ServiceKeyStore } from '@mana/llm-usage-store';
import { keyDigest } from '../http/api-caller.js';
import { createLogger } from '../logging.js';
import { ServiceKeys } from './service-keys.js';

const T0 = Date.UTC(2026, 11, 2, 12, 0, 0);

describe('ServiceKeys', () => {
  let dir: string;
  let store: ServiceKeyStore;
  let now: number;
  let keys: ServiceKeys;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mana-service-keys-'));
    store = new ServiceKeyStore({ location: { kind: 'sqlite', file: join(dir, 'usage.sqlite') } });
    now = T0;
    keys = new ServiceKeys({ store, staticKeyCount: 2, logger: createLogger('silent').logger, reconcile: false, now: () => now });
    await keys.load();
  });

  afterEach(async () => {
    await keys.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = (body: Record<string, unknown>) => {
    const issued = issueKey(settingsFromCreate(body), now);
    return keys.write((s) => s.createServiceKey(issued.record)).then(() => issued);
  };

  it('has no keys at first; a created key answers by the SHA-256 of the presented token, with its policy', async () => {
    expect(keys.hasKeys).toBe(false);
    const epoch = keys.epoch;
    const issued = await create({ name: 'svc', aliases: ['mana/fast-text'], max_concurrency: 3 });
    expect(keys.hasKeys).toBe(true);
    expect(keys.epoch).toBeGreaterThan(epoch);
    const caller = keys.callerOf(keyDigest(issued.key));
    expect(caller).toMatchObject({ id: issued.record.id, name: 'svc', policy: { maxConcurrency: 3 } });
    expect(keys.callerOf(keyDigest(`${issued.key}x`))).toBeUndefined();
  });

  it('the epoch moves when an expiry passes, with no write: the key check then asks again', async () => {
    const issued = await create({ name: 'svc', expires_at: new Date(T0 + 60_000).toISOString() });
    const epoch = keys.epoch;
    now = T0 + 59_999;
    expect(keys.epoch).toBe(epoch);
    expect(keys.callerOf(keyDigest(issued.key))).toBeDefined();
    now = T0 + 60_000;
    expect(keys.epoch).toBeGreaterThan(epoch);
    expect(keys.callerOf(keyDigest(issued.key))).toBeUndefined();
    const after = keys.epoch;
    now = T0 + 3_600_000;
    expect(keys.epoch).toBe(after); // nothing more is due
  });

  it('the epoch moves when a rotation grace ends; the old key stops then', async () => {
    const issued = await create({ name: 'svc' });
    let rotated = '';
    await keys.write((s) =>
      s.updateServiceKey(issued.record.id, (current) => {
        const next = rotateKey(current, 10_000, now);
        rotated = next.key;
        return next.record;
      }),
    );
    const epoch = keys.epoch;
    expect(keys.callerOf(keyDigest(issued.key))).toBeDefined();
    now = T0 + 10_000;
    expect(keys.epoch).toBeGreaterThan(epoch);
    expect(keys.callerOf(keyDigest(issued.key))).toBeUndefined();
    expect(keys.callerOf(keyDigest(rotated))).toBeDefined();
  });

  it('uses are written on close and shown at once before that', async () => {
    const issued = await create({ name: 'svc' });
    now = T0 + 5_000;
    keys.noteUsed(issued.record.id);
    expect(keys.get(issued.record.id)?.lastUsedAt).toBe(T0 + 5_000);
    expect((await store.serviceKey(issued.record.id))?.lastUsedAt).toBeNull();
    // Closing writes the uses, then closes the store: read back through another.
    await keys.close();
    const after = new ServiceKeyStore({ location: { kind: 'sqlite', file: join(dir, 'usage.sqlite') } });
    try {
      expect((await after.serviceKey(issued.record.id))?.lastUsedAt).toBe(T0 + 5_000);
    } finally {
      await after.close();
    }
  });

  it('a second instance on the same database loads the keys at start', async () => {
    const issued = await create({ name: 'svc' });
    const second = new ServiceKeyStore({ location: { kind: 'sqlite', file: join(dir, 'usage.sqlite') } });
    const other = new ServiceKeys({ store: second, staticKeyCount: 0, logger: createLogger('silent').logger, reconcile: false, now: () => now });
    await other.load();
    expect(other.callerOf(keyDigest(issued.key))?.name).toBe('svc');
    await other.close();
  });
});
