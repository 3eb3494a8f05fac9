/**
 * Faults on real databases: the store reports them as rejected calls (which
 * the batch writer retries) and works again by itself once the fault is gone.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeRecord } from './encoded-record.js';
import { UsageStore } from './usage-store.js';
import { request } from './test-records.js';
import { testLocation, type TestLocation } from './test-stores.js';

const one = (requestId: string) => [encodeRecord(randomUUID(), request({ requestId }))];

describe('usage store recovery', () => {
  let where: TestLocation | undefined;
  let store: UsageStore | undefined;

  afterEach(async () => {
    await store?.close();
    await where?.cleanup();
    store = undefined;
    where = undefined;
  });

  it('SQLite: a deleted database file is created again on the next write', async () => {
    where = await testLocation('sqlite');
    store = new UsageStore({ location: where.location });
    await store.write(one('before'));
    const file = (where.location as { file: string }).file;
    rmSync(file);
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    await store.write(one('after'));
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['after']);
  });

  it('SQLite: a lock held by another process fails a write at once instead of blocking, then writes go through', async () => {
    where = await testLocation('sqlite');
    store = new UsageStore({ location: where.location });
    await store.open();
    const other = new BetterSqlite3((where.location as { file: string }).file);
    try {
      other.exec('BEGIN EXCLUSIVE');
      const started = performance.now();
      await expect(store.write(one('blocked'))).rejects.toThrow(/locked/);
      // better-sqlite3 runs on the event loop: waiting for the lock would stall every request.
      expect(performance.now() - started).toBeLessThan(200);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    await store.write(one('unlocked'));
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['unlocked']);
  });

  it('PostgreSQL: writes fail within seconds while the server is down and succeed once it is back', async () => {
    where = await testLocation('postgres');
    if (!where.postgres!.ownsServer) return; // an external server is not ours to stop
    store = new UsageStore({ location: where.location, onBackgroundError: () => undefined });
    await store.write(one('before'));
    await where.postgres!.pauseServer();
    const started = performance.now();
    await expect(store.write(one('down'))).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(5_000);
    await where.postgres!.resumeServer();
    await store.write(one('after'));
    expect((await store.requests({})).requests.map((r) => r.requestId).sort()).toEqual(['after', 'before']);
  }, 60_000);
});
