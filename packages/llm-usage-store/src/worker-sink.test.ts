/**
 * The worker-thread sink, as the gateway runs it: from the built package
 * (`dist/`, built before tests by turbo), on a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from './test-records.js';

const built = (await import(new URL('../dist/index.js', import.meta.url).href)) as typeof import('./index.js');
const dir = mkdtempSync(join(tmpdir(), 'mana-usage-worker-'));
const file = join(dir, 'usage.sqlite');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('worker sink (built)', () => {
  it('is available from the build and writes batches on its own thread; a lock fails the write, then writes go through', async () => {
    expect(built.workerAvailable()).toBe(true);
    const sink = new built.WorkerSink({ kind: 'sqlite', file });
    const store = new built.UsageStore({ location: { kind: 'sqlite', file } });
    try {
      await sink.write(built.recordBatch([request({ requestId: 'first' })]));
      expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['first']);

      const other = new BetterSqlite3(file);
      other.exec('BEGIN EXCLUSIVE');
      await expect(sink.write(built.recordBatch([request({ requestId: 'locked' })]))).rejects.toThrow(/locked/);
      other.exec('ROLLBACK');
      other.close();
      await sink.write(built.recordBatch([request({ requestId: 'after' })]));
      expect((await store.requests({})).requests.map((r) => r.requestId).sort()).toEqual(['after', 'first']);
    } finally {
      await sink.close();
      await store.close();
    }
  });

  it('runs retention and the statistics refresh on its own thread, beside batch writes', async () => {
    const pruneFile = join(dir, 'prune.sqlite');
    const sink = new built.WorkerSink({ kind: 'sqlite', file: pruneFile });
    const store = new built.UsageStore({ location: { kind: 'sqlite', file: pruneFile } });
    const HOUR = 3_600_000;
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    try {
      await sink.write(
        built.recordBatch([request({ requestId: 'old', time: now - 3 * HOUR }), request({ requestId: 'new', time: now })]),
      );
      const [deleted] = await Promise.all([
        sink.prune(now - HOUR),
        sink.write(built.recordBatch([request({ requestId: 'during', time: now + 1 })])),
      ]);
      expect(deleted).toBe(1);
      await sink.refreshStatistics();
      expect((await store.requests({})).requests.map((r) => r.requestId).sort()).toEqual(['during', 'new']);
      const analyzed = new BetterSqlite3(pruneFile, { readonly: true });
      try {
        expect((analyzed.prepare("SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl = 'usage_requests'").get() as { n: number }).n).toBeGreaterThan(0);
      } finally {
        analyzed.close();
      }
    } finally {
      await sink.close();
      await store.close();
    }
  });
});
