/**
 * Faults on real databases: the store reports them as rejected calls (which
 * the batch writer retries) and works again by itself once the fault is gone.
 */
import { rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { BatchWriter } from './batch-writer.js';
import { openConnection, type Connection } from './connections.js';
import { errorText } from './error-text.js';
import { recordBatch } from './record-block.js';
import { oneRequest, request } from './test-records.js';
import { writeRecords } from './write-records.js';
import { storePerTest, type TestLocation } from './test-stores.js';

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

  /**
   * A SQLite connection whose file can no longer grow: max_page_count caps it
   * at the pages it has (a disk without space, portably). Batches stay under
   * the 32-row group insert: single-row INSERTs need no statement journal, so
   * on SQLITE_FULL SQLite rolls the whole transaction back by itself, as it
   * did under live traffic.
   */
  async function fullConnection(where: TestLocation): Promise<Connection> {
    const connection = await openConnection(where.location, () => undefined, 'writes');
    await writeRecords(connection.db, oneRequest('first'), connection.sqlite);
    connection.sqlite!.pragma(`max_page_count = ${connection.sqlite!.pragma('page_count', { simple: true }) as number}`);
    return connection;
  }
  const SMALL_BATCH = 20;
  const MAX_BATCHES = 200; // the last page's free space holds a few batches; far fewer than this

  it('SQLite: a full database fails the write with SQLITE_FULL and its message, not the rollback that followed', async () => {
    const { where } = await openStore('sqlite');
    const connection = await fullConnection(where);
    try {
      let failure: (Error & { code?: string }) | undefined;
      for (let n = 0; n < MAX_BATCHES && failure === undefined; n++) {
        const batch = recordBatch(Array.from({ length: SMALL_BATCH }, (_, i) => request({ requestId: `full-${n}-${i}` })));
        failure = await writeRecords(connection.db, batch, connection.sqlite).then(
          () => undefined,
          (error: unknown) => error as Error & { code?: string },
        );
      }
      expect(failure?.message).toBe('database or disk is full');
      expect(failure?.code).toBe('SQLITE_FULL');
      // As /v1/health shows it (the writer thread sends it as text).
      expect(errorText(failure)).toBe('database or disk is full (SQLITE_FULL)');
    } finally {
      await connection.close();
    }
  });

  it("SQLite: a full database shows as SQLITE_FULL in the batch writer's status (/v1/health's usage.last_error)", async () => {
    const { where } = await openStore('sqlite');
    const connection = await fullConnection(where);
    const writer = new BatchWriter({ write: (batch) => writeRecords(connection.db, batch, connection.sqlite) }, { flushIntervalMs: 60_000 });
    try {
      for (let n = 0; n < MAX_BATCHES && !writer.status.failing; n++) {
        for (let i = 0; i < SMALL_BATCH; i++) writer.record(request({ requestId: `full-${n}-${i}` }));
        await writer.flush();
      }
      expect(writer.status).toMatchObject({ failing: true, queued: SMALL_BATCH, lastError: 'database or disk is full (SQLITE_FULL)' });
    } finally {
      await writer.close(0);
      await connection.close();
    }
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

  it('PostgreSQL: writes fail within seconds while the server is down and succeed once it is back', async (ctx) => {
    const { store, where } = await openStore('postgres', { onBackgroundError: () => undefined });
    if (!where.postgres!.ownsServer) return ctx.skip('an external PostgreSQL server is not this test\'s to stop');
    await store.write(oneRequest('before'));
    await where.postgres!.pauseServer();
    const started = performance.now();
    await expect(store.write(oneRequest('down'))).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(5_000);
    await where.postgres!.resumeServer();
    await store.write(oneRequest('after'));
    expect((await store.requests({})).requests.map((r) => r.requestId).sort()).toEqual(['after', 'before']);
  }, 60_000);

  it('PostgreSQL: a fast shutdown while a write holds a pooled connection fails that write and throws nowhere else', async (ctx) => {
    const { store, where } = await openStore('postgres', { onBackgroundError: () => undefined });
    if (!where.postgres!.ownsServer) return ctx.skip('an external PostgreSQL server is not this test\'s to stop');
    await store.write(oneRequest('before'));
    // The write then waits on the lock inside its transaction, its connection lent out by the pool:
    // when the server stops, that client emits 'error' itself (an uncaught exception without a listener).
    const locker = new pg.Client({ connectionString: (where.location as { url: string }).url });
    locker.on('error', () => undefined); // its backend is stopped too
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table usage_requests in access exclusive mode');
    const uncaught: string[] = [];
    const onUncaught = (error: Error) => uncaught.push(error.message);
    process.on('uncaughtException', onUncaught);
    try {
      const waiting = store.write(oneRequest('waiting')).then(
        () => 'written',
        (error: Error) => error.message,
      );
      // The write must be queued behind the lock (its connection lent out) before the server stops.
      await waitForBlockedLock(locker);
      await where.postgres!.pauseServer(); // pg_ctl stop -m fast: 57P01 to every backend
      expect(await waiting).not.toBe('written');
      await new Promise((r) => setTimeout(r, 200)); // the connection's last events
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await locker.end().catch(() => undefined);
      await where.postgres!.resumeServer();
    }
    await store.write(oneRequest('after'));
    expect((await store.requests({})).requests.map((r) => r.requestId).sort()).toEqual(['after', 'before']);
  }, 60_000);
});

/** Resolves once some backend waits for a lock that is not granted (the write behind `lock table`). */
async function waitForBlockedLock(observer: pg.Client): Promise<void> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const { rows } = await observer.query<{ waiting: string }>(
      "select count(*) as waiting from pg_locks where not granted and relation = 'usage_requests'::regclass",
    );
    if (Number(rows[0]!.waiting) > 0) return;
    if (performance.now() > deadline) throw new Error('the write never waited on the lock');
    await new Promise((r) => setTimeout(r, 10));
  }
}
