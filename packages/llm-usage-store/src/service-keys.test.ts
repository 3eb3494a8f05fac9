/**
 * Service keys on both real engines: a SQLite file and a PostgreSQL database.
 * The tests run in order on one store and build on each other's rows.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_KEYS_CHANNEL } from './service-keys.js';
import { issueKey, rotateKey, settingsFromCreate, settingsFromPatch, type StoredServiceKey } from '@mana/llm-service-keys';
import { ENGINES, testLocation, type TestLocation } from './test-stores.js';
import { ServiceKeyStore } from './key-store.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
const H = 3_600_000;

function issued(body: Record<string, unknown>, now = T0) {
  return issueKey(settingsFromCreate(body), now);
}

describe.each(ENGINES)('service keys on %s', (engine) => {
  let where: TestLocation;
  let store: ServiceKeyStore;
  const secrets: string[] = [];
  let api: StoredServiceKey;

  beforeAll(async () => {
    where = await testLocation(engine);
    store = new ServiceKeyStore({ location: where.location });
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await where?.cleanup();
  });

  it('creates a key with every field and reads it back as it was written', async () => {
    const { record, key } = issued({
      name: 'mana-api',
      description: 'The <b>API</b> service',
      expires_at: '2027-06-01T00:00:00Z',
      aliases: ['mana/fast-text', 'local/m1'],
      priority: 'realtime',
      max_concurrency: 16,
    });
    secrets.push(key);
    api = record;
    expect(await store.createServiceKey(record)).toEqual({ kind: 'written', key: record });
    expect(await store.serviceKey(record.id)).toEqual(record);
    const plain = issued({ name: 'importer' }, T0 + 1);
    secrets.push(plain.key);
    await store.createServiceKey(plain.record);
    expect((await store.serviceKeys()).map((k) => k.name)).toEqual(['mana-api', 'importer']);
    expect(await store.serviceKey('000000000000')).toBeUndefined();
  });

  it('refuses a second key with a taken name, naming the holder; nothing is written', async () => {
    const clash = issued({ name: 'mana-api' });
    expect(await store.createServiceKey(clash.record)).toEqual({ kind: 'name_taken', heldBy: api.id });
    expect(await store.serviceKey(clash.record.id)).toBeUndefined();
  });

  it('updates from the stored key; a change that throws writes nothing; a rename onto a taken name is refused', async () => {
    const written = await store.updateServiceKey(api.id, (current) => ({ ...current, ...settingsFromPatch(current, { disabled: true, description: null }) }), T0 + H);
    expect(written.kind).toBe('written');
    expect(await store.serviceKey(api.id)).toMatchObject({ disabled: true, description: null, priority: 'realtime', createdAt: T0 });

    await expect(
      store.updateServiceKey(api.id, (current) => ({ ...current, ...settingsFromPatch(current, { max_concurrency: 0 }) })),
    ).rejects.toMatchObject({ name: 'KeyFieldError', param: 'max_concurrency' });
    expect((await store.serviceKey(api.id))?.maxConcurrency).toBe(16);

    const importer = (await store.serviceKeys())[1]!;
    expect(await store.updateServiceKey(importer.id, (current) => ({ ...current, name: 'mana-api' }))).toEqual({ kind: 'name_taken', heldBy: api.id });
    expect(await store.updateServiceKey('000000000000', (current) => current)).toEqual({ kind: 'not_found' });
  });

  it('a rotation stores the new digest and the previous one with its grace end', async () => {
    let shown = '';
    const written = await store.updateServiceKey(api.id, (current) => {
      const rotated = rotateKey(current, 24 * H, T0 + 2 * H);
      shown = rotated.key;
      return rotated.record;
    });
    secrets.push(shown);
    expect(written.kind).toBe('written');
    const stored = await store.serviceKey(api.id);
    expect(stored?.digests.previous).toBe(api.digests.current);
    expect(stored?.digests.previousValidUntil).toBe(T0 + 26 * H);
    expect(stored?.digests.current).not.toBe(api.digests.current);
  });

  it('last use only moves forward, in one write for several keys; an unknown id is skipped', async () => {
    const [a, b] = await store.serviceKeys();
    await store.touchServiceKeys(new Map([[a!.id, T0 + 5 * H], [b!.id, T0 + 3 * H], ['ffffffffffff', T0]]));
    await store.touchServiceKeys(new Map([[a!.id, T0 + 4 * H]]));
    const [a2, b2] = await store.serviceKeys();
    expect(a2!.lastUsedAt).toBe(T0 + 5 * H);
    expect(b2!.lastUsedAt).toBe(T0 + 3 * H);
    // An update leaves the last use alone.
    await store.updateServiceKey(a!.id, (current) => ({ ...current, lastUsedAt: null, disabled: false }));
    expect((await store.serviceKey(a!.id))?.lastUsedAt).toBe(T0 + 5 * H);
  });

  it('deletes a key', async () => {
    const [, importer] = await store.serviceKeys();
    expect(await store.deleteServiceKey(importer!.id)).toBe(true);
    expect(await store.deleteServiceKey(importer!.id)).toBe(false);
    expect((await store.serviceKeys()).map((k) => k.name)).toEqual(['mana-api']);
  });

  it('1,000 keys are stored and listed', async () => {
    for (let i = 0; i < 1_000; i++) await store.createServiceKey(issued({ name: `svc-${i}` }, T0 + 10 + i).record);
    const all = await store.serviceKeys();
    expect(all).toHaveLength(1_001);
    expect(all.at(-1)?.name).toBe('svc-999');
  }, 120_000);

  it.runIf(engine === 'postgres')('each committed write NOTIFYs the key id; a refused one sends nothing', async () => {
    const listener = new pg.Client({ connectionString: (where.location as { url: string }).url });
    await listener.connect();
    const received: string[] = [];
    listener.on('notification', (message) => received.push(message.payload ?? ''));
    await listener.query(`LISTEN ${SERVICE_KEYS_CHANNEL}`);
    try {
      const fresh = issued({ name: 'notified' });
      await store.createServiceKey(fresh.record);
      await store.createServiceKey(issued({ name: 'notified' }).record); // name taken: nothing written
      await store.updateServiceKey(fresh.record.id, (current) => ({ ...current, disabled: true }));
      await store.touchServiceKeys(new Map([[fresh.record.id, T0]])); // a last use is not a key change
      await store.deleteServiceKey(fresh.record.id);
      await store.deleteServiceKey(fresh.record.id); // nothing deleted
      // Notifications arrive in commit order: a sentinel sent after the last write arrives after
      // anything those writes announced, so what came before it is all they will ever send.
      await listener.query('select pg_notify($1, $2)', [SERVICE_KEYS_CHANNEL, 'sentinel']);
      const deadline = Date.now() + 5_000;
      while (!received.includes('sentinel') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(received).toEqual([fresh.record.id, fresh.record.id, fresh.record.id, 'sentinel']);
    } finally {
      await listener.end();
    }
  });

  it.runIf(engine === 'sqlite')('the database files hold digests, never a secret', async () => {
    await store.close();
    const dir = dirname((where.location as { file: string }).file);
    const bytes = readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')).join('\n');
    expect(bytes).toContain(api.digests.current);
    for (const key of secrets) {
      expect(bytes).not.toContain(key);
      expect(bytes).not.toContain(key.slice(16)); // the secret part alone
    }
  });
});
