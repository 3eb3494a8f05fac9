/**
 * New SQLite stores use 16 KiB pages (cheaper batch writes); files made with
 * SQLite's default 4 KiB keep it and work as before.
 */
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SQLITE_PAGE_SIZE } from './connections.js';
import { oneRequest } from './test-records.js';
import { storePerTest } from './test-stores.js';

const pageSizeOf = (file: string): number => {
  const database = new BetterSqlite3(file, { readonly: true });
  try {
    return database.pragma('page_size', { simple: true }) as number;
  } finally {
    database.close();
  }
};

describe('SQLite page size', () => {
  const openStore = storePerTest();

  it('a new store file has 16 KiB pages', async () => {
    const { store, where } = await openStore('sqlite');
    const file = (where.location as { file: string }).file;
    await store.write(oneRequest('first'));
    expect(SQLITE_PAGE_SIZE).toBe(16_384);
    expect(pageSizeOf(file)).toBe(16_384);
  });

  it('a store file made with 4 KiB pages keeps them, and reads and writes as before', async () => {
    const { store, where } = await openStore('sqlite');
    const file = (where.location as { file: string }).file;
    const older = new BetterSqlite3(file); // before the store's first use
    older.pragma('page_size = 4096');
    older.pragma('journal_mode = WAL');
    older.exec('CREATE TABLE unrelated (x INTEGER)'); // the file exists with its page size fixed
    older.close();

    await store.write(oneRequest('after-upgrade'));
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['after-upgrade']);
    expect(pageSizeOf(file)).toBe(4_096);
  });
});
