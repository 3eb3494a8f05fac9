/**
 * The batch writer on a real SQLite store: records reach the database off the
 * request path, a failing database costs the caller nothing, the queue stays
 * bounded, and recording resumes by itself.
 */
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchWriter } from './batch-writer.js';
import { UsageStore } from './usage-store.js';
import { request, rescuedRequest } from './test-records.js';
import type { RequestRecord } from './types.js';
import { testLocation, type TestLocation } from './test-stores.js';

async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('batch writer', () => {
  let where: TestLocation | undefined;
  let store: UsageStore | undefined;
  let writer: BatchWriter | undefined;

  afterEach(async () => {
    await writer?.close(100);
    await store?.close();
    await where?.cleanup();
    writer = store = where = undefined;
  });

  async function setUp(options: ConstructorParameters<typeof BatchWriter>[1], engine: 'sqlite' | 'postgres' = 'sqlite') {
    where = await testLocation(engine);
    store = new UsageStore({ location: where.location });
    await store.open();
    writer = new BatchWriter(store, options);
    return { store, writer, file: where.location.kind === 'sqlite' ? where.location.file : '' };
  }

  it('writes recorded requests within one flush interval', async () => {
    const { store, writer } = await setUp({ flushIntervalMs: 50 });
    for (let i = 0; i < 5; i++) writer.record(request({ requestId: `r${i}` }));
    expect(writer.status.queued).toBe(5);
    await until(async () => (await store.requests({})).requests.length === 5, 1_000);
    expect(writer.status).toMatchObject({ queued: 0, written: 5, dropped: 0, failing: false });
  });

  it('writes a full batch at once, without waiting for the interval: heavy traffic never fills the queue between two ticks', async () => {
    const { store, writer } = await setUp({ flushIntervalMs: 60_000, maxBatch: 100 });
    for (let i = 0; i < 99; i++) writer.record(request({ requestId: `r${i}` }));
    await new Promise((r) => setTimeout(r, 100));
    expect(writer.status.written).toBe(0); // below a batch: waits for the interval
    for (let i = 99; i < 300; i++) writer.record(request({ requestId: `r${i}` }));
    await until(() => writer.status.written === 300, 2_000);
    expect(writer.status).toMatchObject({ queued: 0, dropped: 0 });
    expect((await store.summary({ groupBy: 'alias' }))[0]?.requests).toBe(300);
  });

  it('under steady traffic every batch is a full one: records arriving during a write wait for the next full batch', async () => {
    const batches: number[] = [];
    // PostgreSQL: each write takes a few round trips, so records keep arriving while one is under way.
    const { store, writer } = await setUp({ flushIntervalMs: 60_000, maxBatch: 200, onWritten: (n) => batches.push(n) }, 'postgres');
    // Ten records every 2 ms, so writes run while records keep arriving.
    for (let i = 0; i < 1_000; i++) {
      writer.record(request({ requestId: `r${i}` }));
      if (i % 10 === 9) await new Promise((r) => setTimeout(r, 2));
    }
    await until(() => writer.status.written === 1_000, 5_000);
    // What holds however the writes and arrivals interleave: no batch is smaller than maxBatch
    // (the interval never fires), and all records were written.
    expect(batches.filter((n) => n !== 200)).toEqual([]);
    expect(batches.reduce((sum, n) => sum + n, 0)).toBe(1_000);
    expect((await store.summary({ groupBy: 'alias' }))[0]?.requests).toBe(1_000);
  });

  it('while the database is locked: record() stays instant, the queue is bounded, drops are counted and reported once', async () => {
    const dropReports: number[] = [];
    const errors: string[] = [];
    const { store, writer, file } = await setUp({
      flushIntervalMs: 20,
      maxQueued: 1_000,
      onDropped: (n) => dropReports.push(n),
      onWriteError: (e) => errors.push(e.message),
    });
    const other = new BetterSqlite3(file);
    other.exec('BEGIN EXCLUSIVE');
    try {
      const started = performance.now();
      for (let i = 0; i < 5_000; i++) writer.record(request({ requestId: `r${i}` }));
      // record() only queues (~20 ms for 5,000 on an idle machine); 2 s leaves room for a machine whose
      // other core is busy (1.16 s was measured so). What it guards: record() never waits on the store.
      expect(performance.now() - started).toBeLessThan(2_000);
      await until(() => writer.status.failing);
      expect(errors[0]).toMatch(/locked/);
      expect(writer.status.queued).toBe(1_000);
      expect(writer.status.dropped).toBe(4_000);
      // Logged once per minute at most, however many were dropped.
      expect(dropReports).toEqual([1]);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Recording resumes by itself: the newest 1 000 arrive, the oldest were the ones dropped.
    await until(() => writer.status.written === 1_000);
    expect(writer.status.failing).toBe(false);
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.requests({ limit: 500, ...(cursor === undefined ? {} : { cursor }) });
      all.push(...page.requests.map((r) => r.requestId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(all).toHaveLength(1_000);
    expect(all).not.toContain('r3999');
    expect(all).toContain('r4000');
    expect(all).toContain('r4999');
  });

  it('drops exactly the oldest records when the queue overflows, also from the middle of a batch', async () => {
    const { store, writer, file } = await setUp({ flushIntervalMs: 20, maxBatch: 100, maxQueued: 120 });
    const other = new BetterSqlite3(file);
    other.exec('BEGIN EXCLUSIVE');
    try {
      for (let i = 0; i < 250; i++) writer.record(request({ requestId: `r${i}` }));
      await until(() => writer.status.failing);
      expect(writer.status).toMatchObject({ queued: 120, dropped: 130 });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await until(() => writer.status.written === 120);
    const stored = (await store.requests({ limit: 500 })).requests.map((r) => Number(r.requestId.slice(1))).sort((a, b) => a - b);
    expect(stored).toEqual(Array.from({ length: 120 }, (_, i) => 130 + i));
  });

  it('a record that breaks the record type is dropped and counted; records around it are stored whole', async () => {
    const { store, writer } = await setUp({ flushIntervalMs: 20 });
    writer.record(rescuedRequest({ requestId: 'before' }));
    // Its attempts are copied before its plan turns out to be missing: none of them may stay behind.
    const broken = { ...rescuedRequest({ requestId: 'broken' }), plan: undefined } as unknown as RequestRecord;
    expect(() => writer.record(broken)).not.toThrow();
    writer.record(request({ requestId: 'after' }));
    await until(() => writer.status.written === 2);
    expect(writer.status).toMatchObject({ queued: 0, dropped: 1 });
    const stored = (await store.requests({})).requests;
    expect(stored.map((r) => [r.requestId, r.attempts.map((a) => a.target)])).toEqual([
      ['after', ['groq/llama-3.1-8b-instant']],
      ['before', ['groq/llama-3.1-8b-instant', 'ollama/gemma3:4b']],
    ]);
  });

  it('after an outage the backlog is written in full batches, not one per tick of the outage', async () => {
    const batches: number[] = [];
    const { store, writer, file } = await setUp({ flushIntervalMs: 20, maxBatch: 100, onWritten: (n) => batches.push(n) });
    const other = new BetterSqlite3(file);
    other.exec('BEGIN EXCLUSIVE');
    try {
      for (let i = 0; i < 250; i++) {
        writer.record(request({ requestId: `r${i}` }));
        if (i % 10 === 9) await new Promise((r) => setTimeout(r, 25)); // more than a tick between arrivals
      }
      expect(writer.status.failing).toBe(true);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await until(() => writer.status.written === 250);
    // The first try's batch, full ones, and what was still arriving: about 25 ticks went by.
    expect(batches.length).toBeLessThanOrEqual(5);
    expect(batches.filter((n) => n === 100)).toHaveLength(2);
    expect((await store.summary({ groupBy: 'alias' }))[0]?.requests).toBe(250);
  });

  it('close() writes what is still queued', async () => {
    const { store, writer } = await setUp({ flushIntervalMs: 60_000 });
    for (let i = 0; i < 3; i++) writer.record(request({ requestId: `r${i}` }));
    await writer.close();
    expect((await store.requests({})).requests).toHaveLength(3);
    writer.record(request({ requestId: 'late' }));
    expect(writer.status.queued).toBe(0);
  });
});
