/**
 * Several writers on one PostgreSQL (replicas) adding to the same rollup rows
 * at once: each batch's part is kept, none is lost to another's write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBatch } from './record-block.js';
import { request } from './test-records.js';
import { testLocation, type TestLocation } from './test-stores.js';
import { UsageStore } from './usage-store.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

describe('rollups with concurrent writers (PostgreSQL)', () => {
  let where: TestLocation;

  beforeAll(async () => {
    where = await testLocation('postgres');
  }, 60_000);

  afterAll(async () => {
    await where?.cleanup();
  });

  it('three stores writing batches into the same minute at once: the summary counts every request', async () => {
    const stores = Array.from({ length: 3 }, () => new UsageStore({ location: where.location }));
    try {
      await Promise.all(stores.map((s) => s.open()));
      const batchesPerStore = 8;
      const perBatch = 25;
      await Promise.all(
        stores.map(async (store, s) => {
          for (let b = 0; b < batchesPerStore; b++) {
            const batch = recordBatch(
              Array.from({ length: perBatch }, (_, i) => request({ requestId: `s${s}-b${b}-${i}`, time: T0 + 1_000 + i, durationMs: 100 + s })),
            );
            await store.write(batch);
          }
        }),
      );
      const total = stores.length * batchesPerStore * perBatch;
      // Whole minutes and hours come from the rollups; the raw rows say the same.
      const [fromRollups] = await stores[0]!.summary({ groupBy: 'alias', since: T0, until: T0 + 3_600_000 });
      const [fromRows] = await stores[0]!.summary({ groupBy: 'alias', since: T0 + 1, until: T0 + 59_999 });
      expect(fromRollups).toMatchObject({ key: 'fast-text', requests: total, promptTokens: 10 * total });
      expect(fromRows).toMatchObject({ requests: total });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 60_000);
});
