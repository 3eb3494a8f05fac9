/**
 * The key store beside the usage store on one database, on both real engines:
 * keys stored before the table had a store of its own are found again, and
 * either store opens first without the other.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { issueKey, settingsFromCreate } from '@mana/llm-service-keys';
import { openConnection, type Connection } from './connections.js';
import { KEY_MIGRATIONS } from './key-migrations.js';
import { ServiceKeyStore } from './key-store.js';
import { ENGINES, testLocation, type TestLocation } from './test-stores.js';
import { UsageStore } from './usage-store.js';

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);

/**
 * The table as the usage store's migration 0017 made it, before keys had a
 * store of their own: the same DDL as the key store's first step, run without
 * that step being recorded as applied.
 */
async function createTableAsBefore(db: Kysely<unknown>): Promise<void> {
  const migrations = await KEY_MIGRATIONS.provider.getMigrations();
  await migrations['0001_service_keys']!.up(db);
}

async function tables(connection: Connection<unknown>): Promise<string[]> {
  const names = await connection.db.introspection.getTables();
  return names.map((t) => t.name).sort();
}

describe.each(ENGINES)('the key store beside the usage store on %s', (engine) => {
  let where: TestLocation | undefined;
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
    await where?.cleanup();
    where = undefined;
  });
  const keyStore = (location: TestLocation): ServiceKeyStore => {
    const store = new ServiceKeyStore({ location: location.location });
    open.push(store);
    return store;
  };

  it('finds the keys of a database whose usage migrations made the table, and writes there', async () => {
    where = await testLocation(engine);
    // A database as the last release left it: the usage schema, and service_keys holding a key.
    const usage = new UsageStore({ location: where.location });
    open.push(usage);
    await usage.open();
    const raw = await openConnection<unknown>(where.location, () => undefined);
    const old = issueKey(settingsFromCreate({ name: 'made-before' }), T0).record;
    try {
      await createTableAsBefore(raw.db);
      await sql`insert into service_keys (id, name, created_at, updated_at, disabled, secret_digest) values (${old.id}, ${old.name}, ${T0}, ${T0}, 0, ${old.digests.current})`.execute(raw.db);
    } finally {
      await raw.close();
    }
    const keys = keyStore(where);
    expect((await keys.serviceKeys()).map((k) => [k.id, k.name, k.digests.current])).toEqual([[old.id, 'made-before', old.digests.current]]);
    const fresh = issueKey(settingsFromCreate({ name: 'made-after' }), T0 + 1).record;
    expect(await keys.createServiceKey(fresh)).toEqual({ kind: 'written', key: fresh });
    expect((await keys.serviceKeys()).map((k) => k.name)).toEqual(['made-before', 'made-after']);
  });

  it('opens alone on a new database, with no usage table; the usage store opens on it afterwards', async () => {
    where = await testLocation(engine);
    const keys = keyStore(where);
    const record = issueKey(settingsFromCreate({ name: 'no-usage' }), T0).record;
    await keys.createServiceKey(record);
    // Opened with the key store's migrations only: nothing is migrated by looking.
    const raw = await openConnection<unknown>(where.location, () => undefined, 'queries', KEY_MIGRATIONS);
    try {
      expect((await tables(raw)).filter((t) => t.startsWith('usage_'))).toEqual([]);
      expect(await tables(raw)).toContain('service_keys');
    } finally {
      await raw.close();
    }
    // Usage recording switched on later: its migrations run beside the key table, which keeps its keys.
    const usage = new UsageStore({ location: where.location });
    open.push(usage);
    await usage.open();
    expect((await keys.serviceKeys()).map((k) => k.name)).toEqual(['no-usage']);
  });
});
