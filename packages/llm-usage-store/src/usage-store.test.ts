/**
 * One suite, two real engines: a SQLite file and a PostgreSQL database.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HISTOGRAM_RELATIVE_ERROR } from './histogram.js';
import { recordBatch } from './record-block.js';
import { UsageStore } from './usage-store.js';
import { attempt, request, rescuedRequest } from './test-records.js';
import { ENGINES, testLocation, type TestLocation } from './test-stores.js';
import type { RequestRecord } from './types.js';
import { isUsageQueryError } from './usage-query-error.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

const batchOf = (records: RequestRecord[]) => recordBatch(records);

/** p50/p95 read from the rollups' histograms are within half a bin of the exact nearest rank. */
function expectRanks(actual: { p50: number | null; p95: number | null }, exact: { p50: number | null; p95: number | null }): void {
  for (const p of ['p50', 'p95'] as const) {
    if (exact[p] === null) expect(actual[p]).toBeNull();
    else expect(Math.abs(actual[p]! - exact[p]!)).toBeLessThanOrEqual(exact[p]! * HISTOGRAM_RELATIVE_ERROR + 0.001);
  }
}

function nearestRanks(values: number[]): { p50: number | null; p95: number | null } {
  if (values.length === 0) return { p50: null, p95: null };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.ceil((p * sorted.length) / 100) - 1]!;
  return { p50: at(50), p95: at(95) };
}

interface Expected {
  requests: number;
  errors: number;
  rescued: number;
  prompt: number;
  completion: number;
  cost: number | null;
  durations: number[];
  ttfbs: number[];
}

/** The summary's counting rules applied to the records themselves. */
function bruteSummary(records: RequestRecord[], groupBy: 'alias' | 'key' | 'target'): Map<string | null, Expected> {
  const out = new Map<string | null, Expected>();
  const of = (key: string | null) => {
    let e = out.get(key);
    if (e === undefined) out.set(key, (e = { requests: 0, errors: 0, rescued: 0, prompt: 0, completion: 0, cost: null, durations: [], ttfbs: [] }));
    return e;
  };
  const add = (e: Expected, prompt: number | null, completion: number | null, cost: number | null, duration: number, ttfb: number | null) => {
    e.prompt += prompt ?? 0;
    e.completion += completion ?? 0;
    if (cost !== null) e.cost = (e.cost ?? 0) + cost;
    e.durations.push(duration);
    if (ttfb !== null) e.ttfbs.push(ttfb);
  };
  for (const r of records) {
    const failovers = r.attempts.filter((a) => a.failedOver).length;
    if (groupBy === 'alias' || groupBy === 'key') {
      const e = of(groupBy === 'alias' ? r.alias : r.keyId);
      e.requests += 1;
      e.errors += (r.status >= 400 ? 1 : 0) + failovers;
      e.rescued += failovers > 0 && r.status < 400 ? 1 : 0;
      add(e, r.promptTokens, r.completionTokens, r.costUsd, r.durationMs, r.ttfbMs);
      continue;
    }
    r.attempts.forEach((a, i) => {
      const e = of(a.target);
      const last = i === r.attempts.length - 1;
      e.requests += last && !a.failedOver ? 1 : 0;
      e.errors += a.outcome === 'ok' || a.outcome === 'cancelled' ? 0 : 1;
      e.rescued += a.outcome === 'ok' && r.attempts.slice(0, i).some((b) => b.failedOver) ? 1 : 0;
      add(e, a.promptTokens, a.completionTokens, a.costUsd, a.durationMs, last ? r.ttfbMs : null);
    });
  }
  return out;
}

describe.each(ENGINES)('usage store on %s', (engine) => {
  let where: TestLocation;
  let store: UsageStore;

  beforeAll(async () => {
    where = await testLocation(engine);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await where?.cleanup();
  });

  beforeEach(async () => {
    await store?.close();
    // Each test starts from an empty store: prune everything the last one wrote.
    store = new UsageStore({ location: where.location });
    await store.prune(Number.MAX_SAFE_INTEGER);
  });

  it('stores a rescued request with its two attempts, the first failed over', async () => {
    await store.write(batchOf([rescuedRequest({ requestId: 'r-rescued', time: T0 })]));
    const page = await store.requests({});
    expect(page.nextCursor).toBeNull();
    expect(page.requests).toHaveLength(1);
    const stored = page.requests[0]!;
    expect(stored).toMatchObject({ requestId: 'r-rescued', status: 200, attemptCount: 2, failovers: 1, rescued: true, time: T0 });
    expect(stored.attempts.map((a) => [a.position, a.target, a.outcome, a.failedOver])).toEqual([
      [0, 'groq/llama-3.1-8b-instant', 'failed', true],
      [1, 'ollama/gemma3:4b', 'ok', false],
    ]);
    expect(stored.attempts[0]).toMatchObject({ reason: 'http_503', upstreamStatus: 503, durationMs: 30, costUsd: null });
  });

  it('gives back every field of every record as recorded, whatever the batch holds', async () => {
    // Records share strings and differ in the rest; blocks carry each string once (record-block.ts).
    const full = request({
      requestId: 'reqé-1 "quoted"',
      time: T0 + 7,
      keyFingerprint: 'k:0f0f0f0f0f0f',
      replica: 'gw-b:3026',
      status: 200,
      code: null,
      stream: true,
      priority: 'low',
      durationMs: 812.345678,
      ttfbMs: 120.5,
      cachedTokens: 4,
      attempts: [
        attempt(0, { target: 'together/x', provider: 'together', model: 'x', outcome: 'failed', reason: 'http_429', upstreamStatus: 429, durationMs: 3.25, promptTokens: null, completionTokens: null, costUsd: null, failedOver: true }),
        attempt(1, { target: 'openrouter/y', provider: 'openrouter', model: 'y', outcome: 'rejected', reason: 'invalid_json', upstreamStatus: 200, durationMs: 90.5, promptTokens: 11, completionTokens: 3, cachedTokens: 2, costUsd: 0.00002, failedOver: true }),
        attempt(2, { cachedTokens: 4 }),
      ],
    });
    const records = [
      { ...full, plan: [{ target: 'ollama/z', outcome: 'skipped', reason: 'provider_unhealthy' }, ...full.plan] },
      request({ requestId: 'refused', time: T0 + 8, alias: null, model: 'groq/direct', status: 400, code: 'model_not_allowed', attempts: [], keyFingerprint: null, ttfbMs: null, costUsd: null }),
      request({ requestId: 'plain', time: T0 + 9 }),
    ];
    await store.write(batchOf(records));
    const stored = (await store.requests({})).requests;
    expect(stored.map((r) => r.requestId)).toEqual(['plain', 'refused', 'reqé-1 "quoted"']);
    for (const record of records) {
      const { id, failovers, rescued, ...rest } = stored.find((r) => r.requestId === record.requestId)!;
      expect(id).toMatch(/^[0-9a-z]{9}-[0-9a-f]{12}[0-9a-z]{6}$/);
      expect(rest).toEqual(record);
      expect([failovers, rescued]).toEqual(record.requestId === 'plain' || record.requestId === 'refused' ? [0, false] : [2, true]);
    }
  });

  it('summarises it as 1 request, 1 error, 1 rescued, by alias and by target', async () => {
    await store.write(batchOf([rescuedRequest({ time: T0 })]));
    const [alias] = await store.summary({ groupBy: 'alias' });
    expect(alias).toMatchObject({ key: 'fast-text', requests: 1, errors: 1, rescued: 1, promptTokens: 10, completionTokens: 5 });
    const byTarget = await store.summary({ groupBy: 'target' });
    expect(byTarget.map((r) => [r.key, r.requests, r.errors, r.rescued])).toEqual([
      ['ollama/gemma3:4b', 1, 0, 1],
      ['groq/llama-3.1-8b-instant', 0, 1, 0],
    ]);
    const byProvider = await store.summary({ groupBy: 'provider' });
    expect(byProvider.map((r) => [r.key, r.requests, r.errors])).toEqual([
      ['ollama', 1, 0],
      ['groq', 0, 1],
    ]);
  });

  it('counts a request that failed everywhere once, with an error per failed attempt', async () => {
    const failed = request({
      status: 502,
      code: 'all_targets_failed',
      attempts: [
        attempt(0, { outcome: 'failed', reason: 'http_500', upstreamStatus: 500, failedOver: true, costUsd: null }),
        attempt(1, { target: 'b/m', provider: 'b', outcome: 'failed', reason: 'connect_refused', upstreamStatus: null, costUsd: null }),
      ],
      ttfbMs: 5,
    });
    await store.write(batchOf([failed]));
    const [alias] = await store.summary({ groupBy: 'alias' });
    expect(alias).toMatchObject({ requests: 1, errors: 2, rescued: 0, costUsd: null });
    const errors = await store.errors({});
    expect(errors.requests.map((r) => r.code)).toEqual(['all_targets_failed']);
  });

  it('counts a hedged request once, its cancelled call as no error and no request of its target', async () => {
    const hedged = request({
      attempts: [
        attempt(0, { target: 'ollama/gemma3:4b', provider: 'ollama', outcome: 'cancelled', reason: 'hedge_lost', upstreamStatus: null, promptTokens: null, completionTokens: null, costUsd: null }),
        attempt(1, { costUsd: 0.00002 }),
      ],
      time: T0,
    });
    await store.write(batchOf([hedged]));
    const [alias] = await store.summary({ groupBy: 'alias' });
    expect(alias).toMatchObject({ requests: 1, errors: 0, rescued: 0 });
    const byTarget = await store.summary({ groupBy: 'target' });
    expect(byTarget.map((r) => [r.key, r.requests, r.errors]).sort()).toEqual([
      ['groq/llama-3.1-8b-instant', 1, 0],
      ['ollama/gemma3:4b', 0, 0],
    ]);
    expect((await store.errors({})).requests).toEqual([]);
  });

  it('sums tokens and cost, and keeps unknown cost null rather than 0', async () => {
    await store.write(
      batchOf([
        request({ requestId: 'a', alias: 'priced', attempts: [attempt(0, { promptTokens: 1000, completionTokens: 200, costUsd: 0.0013 })] }),
        request({ requestId: 'b', alias: 'priced', attempts: [attempt(0, { promptTokens: 3000, completionTokens: 800, costUsd: 0.0042 })] }),
        request({ requestId: 'c', alias: 'unpriced', attempts: [attempt(0, { costUsd: null })] }),
      ]),
    );
    const rows = await store.summary({ groupBy: 'alias' });
    const priced = rows.find((r) => r.key === 'priced')!;
    expect(priced).toMatchObject({ requests: 2, promptTokens: 4000, completionTokens: 1000 });
    expect(priced.costUsd).toBeCloseTo(0.0055, 10);
    expect(rows.find((r) => r.key === 'unpriced')!.costUsd).toBeNull();
  });

  it('gives nearest-rank p50/p95 of duration and time to first byte, within the histogram precision', async () => {
    const records = Array.from({ length: 100 }, (_, i) =>
      request({ requestId: `p${i}`, time: T0 + i, durationMs: i + 1, ttfbMs: (i + 1) * 2 }),
    );
    await store.write(batchOf(records));
    const [row] = await store.summary({ groupBy: 'alias' });
    expectRanks(row!.durationMs, { p50: 50, p95: 95 });
    expectRanks(row!.ttfbMs, { p50: 100, p95: 190 });
    const [target] = await store.summary({ groupBy: 'target' });
    expectRanks(target!.ttfbMs, { p50: 100, p95: 190 });
  });

  it('answers from rollups and raw edges exactly what the rows say, for any window', async () => {
    // 600 requests, one every 37 s over 6 h 10 min from 11:55:10, then 80 every
    // 53 min from three days before, across aliases, with failovers and
    // failures, so windows cut days, hours and minutes raggedly.
    const start = T0 - 5 * 60_000 + 10_000;
    const records = Array.from({ length: 680 }, (_, i) => {
      const time = i < 600 ? start + i * 37_000 : T0 - 3 * 24 * HOUR + (i - 600) * 53 * 60_000 + 7_001;
      const alias = ['a', 'b', 'c'][i % 3]!;
      // Two keys and requests without one (auth off), across aliases.
      const keyId = [null, 'env-1', 'svc-2', 'env-1', 'svc-2'][i % 5]!;
      if (i % 10 === 0) return rescuedRequest({ requestId: `w${i}`, time, alias, keyId, keyName: keyId, durationMs: 100 + i, ttfbMs: 50 + i });
      if (i % 17 === 0) return request({ requestId: `w${i}`, time, alias, keyId, keyName: keyId, status: 502, code: 'all_targets_failed', attempts: [attempt(0, { outcome: 'failed', reason: 'http_500', costUsd: null, promptTokens: null, completionTokens: null })], durationMs: 10 + i, ttfbMs: null });
      return request({ requestId: `w${i}`, time, alias, keyId, keyName: keyId, durationMs: 20 + (i % 50), ttfbMs: 10 + (i % 40), attempts: [attempt(0, { durationMs: 15 + (i % 50), promptTokens: i, completionTokens: 2 * i, costUsd: i / 1e6 })] });
    });
    // Written in three batches, as the batch writer would: the rollups add up across batches.
    for (let i = 0; i < records.length; i += 200) await store.write(batchOf(records.slice(i, i + 200)));
    const windows: [number | undefined, number | undefined][] = [
      [undefined, undefined],
      [T0, T0 + 3 * HOUR], // whole hours only
      [T0 + 61_234, T0 + 4 * HOUR + 59_001], // ragged: raw edges, minutes and hours
      [T0 + 10_000, T0 + 50_000], // inside one minute: raw only
      [T0 + 30_000, T0 + 30 * 60_000 + 5], // minutes and raw, no whole hour
      [start + 37_000 * 100, undefined],
      [T0 - 2 * 24 * HOUR - 123_456, T0 + 5 * HOUR + 1], // days, hours, minutes and raw at both ends
      [undefined, T0 - 24 * HOUR + 61_000],
    ];
    for (const [since, until] of windows) {
      const inWindow = records.filter((r) => (since === undefined || r.time >= since) && (until === undefined || r.time < until));
      for (const groupBy of ['alias', 'key', 'target'] as const) {
        const rows = await store.summary({ groupBy, ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) });
        const expected = bruteSummary(inWindow, groupBy);
        expect(rows.map((r) => String(r.key)).sort()).toEqual([...expected.keys()].map(String).sort());
        for (const row of rows) {
          const e = expected.get(row.key)!;
          expect([row.requests, row.errors, row.rescued, row.promptTokens, row.completionTokens]).toEqual([e.requests, e.errors, e.rescued, e.prompt, e.completion]);
          if (e.cost === null) expect(row.costUsd).toBeNull();
          else expect(row.costUsd).toBeCloseTo(e.cost, 12);
          expectRanks(row.durationMs, nearestRanks(e.durations));
          expectRanks(row.ttfbMs, nearestRanks(e.ttfbs));
        }
      }
    }
  });

  it('keeps the rollups of a retried batch and of pruned hours right', async () => {
    const batch = batchOf([request({ requestId: 'twice', time: T0 + 5 })]);
    await store.write(batch);
    await store.write(batch);
    expect((await store.summary({ groupBy: 'alias', since: T0 - HOUR, until: T0 + HOUR }))[0]).toMatchObject({ requests: 1 });
    await store.write(batchOf([request({ requestId: 'later', time: T0 + 2 * HOUR + 5 })]));
    // The cutoff falls inside the hour of 'later': pruning rounds down to the hour, so that hour stays whole.
    expect(await store.prune(T0 + 2 * HOUR + 30 * 60_000)).toBe(1);
    expect((await store.summary({ groupBy: 'alias' })).map((r) => r.requests)).toEqual([1]);
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['later']);
  });

  it('ranks each group apart, written in any order, skipping missing times to first byte', async () => {
    // 'odd': durations 1..37 written shuffled (p50 = 19th = 19, p95 = 36th = 36);
    // ttfb only on every other row (19 values 2, 6, …, 74: p50 = 10th = 38, p95 = 19th = 74).
    // 'tiny': one request of 500 ms with no ttfb.
    const order = Array.from({ length: 37 }, (_, i) => (i * 17) % 37);
    const records = order.map((i) =>
      request({ requestId: `o${i}`, time: T0 + i, alias: 'odd', durationMs: i + 1, ttfbMs: i % 2 === 0 ? (i + 1) * 2 : null }),
    );
    records.push(request({ requestId: 'tiny', time: T0, alias: 'tiny', durationMs: 500, ttfbMs: null }));
    await store.write(batchOf(records));
    const rows = await store.summary({ groupBy: 'alias' });
    const odd = rows.find((r) => r.key === 'odd')!;
    expect(odd.requests).toBe(37);
    expectRanks(odd.durationMs, { p50: 19, p95: 36 });
    expectRanks(odd.ttfbMs, { p50: 38, p95: 74 });
    const tiny = rows.find((r) => r.key === 'tiny')!;
    expect(tiny.requests).toBe(1);
    expectRanks(tiny.durationMs, { p50: 500, p95: 500 });
    expect(tiny.ttfbMs).toEqual({ p50: null, p95: null });
  });

  it('filters requests by time, alias, target, status, code, key and failed_over', async () => {
    await store.write(
      batchOf([
        rescuedRequest({ requestId: 'rescued', time: T0 }),
        request({ requestId: 'plain', time: T0 + HOUR, alias: 'other', keyId: 'env-2', keyName: 'env-2' }),
        request({ requestId: 'refused', time: T0 + 2 * HOUR, status: 400, code: 'upstream_400', attempts: [], keyId: null, keyName: null }),
      ]),
    );
    const ids = async (q: Parameters<UsageStore['requests']>[0]) => (await store.requests(q)).requests.map((r) => r.requestId);
    expect(await ids({})).toEqual(['refused', 'plain', 'rescued']);
    expect(await ids({ since: T0 + HOUR })).toEqual(['refused', 'plain']);
    expect(await ids({ until: T0 + HOUR })).toEqual(['rescued']);
    expect(await ids({ alias: 'other' })).toEqual(['plain']);
    expect(await ids({ target: 'ollama/gemma3:4b' })).toEqual(['rescued']);
    expect(await ids({ status: 400 })).toEqual(['refused']);
    expect(await ids({ code: 'upstream_400' })).toEqual(['refused']);
    expect(await ids({ key: 'env-1' })).toEqual(['rescued']);
    expect(await ids({ key: 'env-2' })).toEqual(['plain']);
    expect(await ids({ key: 'env-3' })).toEqual([]);
    expect(await ids({ failedOver: true })).toEqual(['rescued']);
    expect(await ids({ failedOver: false })).toEqual(['refused', 'plain']);
    expect((await store.errors({})).requests.map((r) => r.requestId)).toEqual(['refused', 'rescued']);
    const summary = await store.summary({ groupBy: 'alias', since: T0 + HOUR, until: T0 + 2 * HOUR });
    expect(summary.map((r) => [r.key, r.requests])).toEqual([['other', 1]]);
    const byKey = await store.summary({ groupBy: 'key', since: T0 - HOUR, until: T0 + 3 * HOUR });
    expect(byKey.map((r) => [r.key, r.requests])).toEqual([['env-1', 1], ['env-2', 1], [null, 1]]);
  });

  it('a number JSON cannot carry (NaN, Infinity) never fails a batch: 0 where a value is required, null elsewhere', async () => {
    const odd = request({ requestId: 'odd', durationMs: Number.NaN, promptTokens: Number.POSITIVE_INFINITY, attempts: [attempt(0, { durationMs: Number.POSITIVE_INFINITY, costUsd: Number.NaN })] });
    await store.write(batchOf([odd, request({ requestId: 'plain' })]));
    const stored = (await store.requests({})).requests;
    expect(stored.map((r) => r.requestId).sort()).toEqual(['odd', 'plain']);
    const row = stored.find((r) => r.requestId === 'odd');
    expect(row).toMatchObject({ durationMs: 0, promptTokens: null });
    expect(row?.attempts[0]).toMatchObject({ durationMs: 0, costUsd: null });
  });

  it('treats SQL metacharacters in every filter as plain text', async () => {
    await store.write(batchOf([request({ requestId: 'x' })]));
    const nasty = `' OR 1=1; DROP TABLE usage_requests; --`;
    const page = await store.requests({ alias: nasty, target: nasty, code: nasty, key: nasty });
    expect(page.requests).toEqual([]);
    expect((await store.requests({})).requests).toHaveLength(1);
  });

  it('pages through requests with a cursor, newest first, ties broken by id, nothing twice', async () => {
    // Three requests per millisecond: the cursor must not lose or repeat ties.
    const records = Array.from({ length: 25 }, (_, i) => request({ requestId: `n${i}`, time: T0 + Math.floor(i / 3) }));
    await store.write(batchOf(records));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.requests({ limit: 10, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.requests.map((r) => r.requestId));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(25);
    const times = seen.map((id) => records.find((r) => r.requestId === id)!.time);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('refuses bad queries with a UsageQueryError naming the parameter', async () => {
    const refusal = async (work: () => Promise<unknown>) => {
      const error = await work().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isUsageQueryError(error)).toBe(true);
      return (error as { param: string }).param;
    };
    expect(await refusal(() => store.requests({ limit: 0 }))).toBe('limit');
    expect(await refusal(() => store.requests({ limit: 1e9 }))).toBe('limit');
    expect(await refusal(() => store.requests({ limit: 2.5 }))).toBe('limit');
    expect(await refusal(() => store.requests({ since: T0 + 1, until: T0 }))).toBe('since');
    expect(await refusal(() => store.requests({ cursor: 'not-a-cursor' }))).toBe('cursor');
    expect(await refusal(() => store.summary({ groupBy: 'nope' as 'alias' }))).toBe('group_by');
    expect(await refusal(() => store.summary({ groupBy: 'alias', since: T0 + 1, until: T0 }))).toBe('since');
    // The store still works after refusing.
    expect((await store.requests({})).requests).toEqual([]);
  });

  it('prunes requests and their attempts older than the cutoff', async () => {
    await store.write(
      batchOf([rescuedRequest({ requestId: 'old', time: T0 - 31 * 24 * HOUR }), rescuedRequest({ requestId: 'new', time: T0 })]),
    );
    expect(await store.prune(T0 - 30 * 24 * HOUR)).toBe(1);
    expect((await store.requests({})).requests.map((r) => r.requestId)).toEqual(['new']);
    const byTarget = await store.summary({ groupBy: 'target' });
    expect(byTarget.reduce((n, r) => n + r.requests + r.errors, 0)).toBe(2); // only the new request's two attempts remain
  });

  it('reopens an existing store without migrating twice and keeps its data', async () => {
    await store.write(batchOf([request({ requestId: 'kept' })]));
    const again = new UsageStore({ location: where.location });
    try {
      await again.open();
      expect((await again.requests({})).requests.map((r) => r.requestId)).toEqual(['kept']);
    } finally {
      await again.close();
    }
  });

  it('counts only the new rows of a batch whose later part was stored before', async () => {
    // SQLite inserts rows 32 to a statement: rows 10 to 31 were stored by the first write, rows 0 to 9 are new.
    const { block } = batchOf(Array.from({ length: 70 }, (_, i) => request({ requestId: `p${i}`, time: T0 + i })));
    await store.write({ block, from: 10 });
    await store.write({ block, from: 0 });
    expect((await store.summary({ groupBy: 'alias', since: T0 - HOUR, until: T0 + HOUR }))[0]).toMatchObject({ requests: 70 });
    expect((await store.requests({ limit: 100 })).requests).toHaveLength(70);
  });

  it('writes a retried batch only once', async () => {
    const batch = batchOf([rescuedRequest({ requestId: 'once' })]);
    await store.write(batch);
    await store.write(batch);
    const page = await store.requests({});
    expect(page.requests).toHaveLength(1);
    expect(page.requests[0]!.attempts).toHaveLength(2);
  });
});
