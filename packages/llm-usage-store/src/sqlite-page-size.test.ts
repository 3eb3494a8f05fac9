/**
 * New SQLite stores use 16 KiB pages (cheaper batch writes); files made with
 * SQLite's default 4 KiB keep it and work as before.
 */
import { randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SQLITE_PAGE_SIZE } from './connections.js';
import { encodeRecord } from './encoded-record.js';
import { request } from './test-records.js';
import { testLocation, type TestLocation } from './test-stores.js';
import { UsageStore } from './usage-store.js';

const pageSizeOf = (file: string): number => {
  const database = new BetterSqlite3(file, { readonly: true });
  try {
    return database.pragma('page_size', { simple: true }) as number;
  } finally {
    database.close();
  }
};

describe('SQLite page size', () => {
  let where: TestLocation | undefined;
  let store: UsageStore | undefined;

  afterEach(async () => {
    await store?.close();
    await where?.cleanup();
    store = undefined;
    where = undefined;
  });

  it('a new store file has 16 KiB pages', async () => {
    where = await testLocation('sqlite');
    const file = (where.location as { file: string }).file;
    store = new UsageStore({ location: where.location });
    await store.write([encodeRecord(randomUUID(), request({ requestId: 'first' }))]);
    expect(SQLITE_PAGE_SIZE).toBe(16_384);
    expect(pageSizeOf(file)).toBe(16_384);
  });

  it('a store file made with 4 KiB pages keeps them, and reads and writes as before', async () => {
    where = await testLocation('sqlite');
    const file = (where.location as { file: string }).file;
    const older = new BetterSqlite3(file);
    older.pragma('page_size = 4096');
    older.pragma('journal_mode = WAL');
    older.exec('CREATE TABLE unrelated (x INTEGER)'); // the file exists with its page size fixed
    older.close();

    store = new UsageStore({ location: where.location });
    await store.write([encodeRecord(randomUUID(), request({ requestId: 'after-upgrade' }))]);
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['after-upgrade']);
    expect(pageSizeOf(file)).toBe(4_096);
  });
});
