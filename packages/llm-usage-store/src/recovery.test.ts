/**
 * Faults on real databases: the store reports them as rejected calls (which
 * the batch writer retries) and works again by itself once the fault is gone.
 */
import { rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { oneRequest } from './test-records.js';
import { storePerTest } from './test-stores.js';

describe('usage store recovery', () => {
  const openStore = storePerTest();

  it('SQLite: a deleted database file is created again on the next write', async () => {
    const { store, where } = await openStore('sqlite');
    await store.write(oneRequest('before'));
    const file = (where.location as { file: string }).file;
    rmSync(file);
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    await store.write(oneRequest('after'));
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['after']);
  });

  it('SQLite: a lock held by another process fails a write at once instead of blocking, then writes go through', async () => {
    const { store, where } = await openStore('sqlite');
    await store.open();
    const other = new BetterSqlite3((where.location as { file: string }).file);
    try {
      other.exec('BEGIN EXCLUSIVE');
      const started = performance.now();
      await expect(store.write(oneRequest('blocked'))).rejects.toThrow(/locked/);
      // better-sqlite3 runs on the event loop: waiting for the lock would stall every request.
      expect(performance.now() - started).toBeLessThan(200);
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
    await store.write(oneRequest('unlocked'));
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['unlocked']);
  });

  it('PostgreSQL: writes fail within seconds while the server is down and succeed once it is back', async () => {
    const { store, where } = await openStore('postgres', { onBackgroundError: () => undefined });
    if (!where.postgres!.ownsServer) return; // an external server is not ours to stop
    await store.write(oneRequest('before'));
    await where.postgres!.pauseServer();
    const started = performance.now();
    await expect(store.write(oneRequest('down'))).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(5_000);
    await where.postgres!.resumeServer();
    await store.write(oneRequest('after'));
    expect((await store.requests({})).requests.map((r) => r.requestId).sort()).toEqual(['after', 'before']);
  }, 60_000);
});
