/**
 * Upgrading a store written before the rollups existed (migration 0004 builds
 * them from the stored rows), on a real SQLite file.
 */
import { randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { request, rescuedRequest } from './test-records.js';
import { testLocation, type TestLocation } from './test-stores.js';
import { encodeRecord } from './encoded-record.js';
import { UsageStore } from './usage-store.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const HOUR = 3_600_000;

describe('migration 0004 (rollups)', () => {
  let where: TestLocation | undefined;

  afterEach(async () => {
    await where?.cleanup();
  });

  it('builds the rollups of rows stored before it, so summaries of old data stay right', async () => {
    where = await testLocation('sqlite');
    const records = [
      rescuedRequest({ requestId: 'a', time: T0 - 50 * HOUR }),
      request({ requestId: 'b', time: T0 - 2 * HOUR + 17, alias: 'other' }),
      request({ requestId: 'c', time: T0 + 5, status: 502, code: 'all_targets_failed' }),
    ];
    let store = new UsageStore({ location: where.location });
    await store.write(records.map((record) => encodeRecord(randomUUID(), record)));
    const before = await store.summary({ groupBy: 'alias' });
    await store.close();

    // The file as the previous version left it: rows, no rollups table, 0004 not applied.
    const file = (where.location as { file: string }).file;
    const raw = new BetterSqlite3(file);
    raw.exec(`DROP TABLE usage_rollups; DELETE FROM kysely_migration WHERE name = '0004_usage_rollups'`);
    raw.close();

    store = new UsageStore({ location: where.location });
    try {
      expect(await store.summary({ groupBy: 'alias' })).toEqual(before);
      expect((await store.summary({ groupBy: 'target', since: T0 - 3 * HOUR })).map((r) => [r.key, r.requests])).toEqual([['groq/llama-3.1-8b-instant', 2]]);
      expect(before.map((r) => [r.key, r.requests, r.errors, r.rescued])).toEqual([
        ['fast-text', 2, 2, 1],
        ['other', 1, 0, 0],
      ]);
    } finally {
      await store.close();
    }
  });
});
