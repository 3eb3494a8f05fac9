import { startTestPostgres, type TestPostgres } from '@mana/llm-testkit';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { REPLICAS_CHANNEL } from './replica-rows.js';
import { SharedState, type SharedStateOptions } from './shared-state.js';

let postgres: TestPostgres;
const open: SharedState[] = [];

beforeAll(async () => {
  postgres = await startTestPostgres();
}, 60_000);

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  await query('DELETE FROM replicas').catch(() => undefined);
});

afterAll(async () => {
  await postgres?.stop();
});

async function query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: postgres.url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** A replica's shared state, started (its first heartbeat done). */
async function replica(name: string, extra: Partial<SharedStateOptions> = {}): Promise<SharedState> {
  const shared = new SharedState({ url: postgres.url, replica: name, applyTransition: () => false, ...extra });
  open.push(shared);
  expect(await shared.start(10_000, { currentVersion: 'v1', onConfigChanged: () => undefined })).toBe(true);
  return shared;
}

async function until(condition: () => boolean, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
  return performance.now() - start;
}

// A heartbeat far longer than any test: whatever changes the count before it is a notification.
const NO_HEARTBEAT = { heartbeatIntervalMs: 600_000 };

describe('replica membership', () => {
  it('counts itself alone, and a replica starting beside others counts them from its first request', async () => {
    const a = await replica('a:1');
    expect(a.aliveReplicas()).toBe(1);
    await replica('b:1');
    const c = await replica('c:1');
    expect(c.aliveReplicas()).toBe(3);
    expect((await query('SELECT id FROM replicas ORDER BY id')).rows.map((r: { id: string }) => r.id)).toEqual(['a:1', 'b:1', 'c:1']);
  }, 30_000);

  it('tells the others of a join at once, by notification, not at their next heartbeat', async () => {
    const a = await replica('a:1', NO_HEARTBEAT);
    const joined = performance.now();
    await replica('b:1');
    const waited = await until(() => a.aliveReplicas() === 2, 5_000);
    expect(performance.now() - joined).toBeLessThan(5_000);
    expect(waited).toBeLessThan(1_000);
  }, 30_000);

  it('a clean leave removes the row and the others take its share at once', async () => {
    const a = await replica('a:1', NO_HEARTBEAT);
    const b = await replica('b:1');
    await until(() => a.aliveReplicas() === 2, 5_000);
    await b.close();
    expect(await until(() => a.aliveReplicas() === 1, 5_000)).toBeLessThan(1_000);
    expect((await query('SELECT id FROM replicas')).rows.map((r: { id: string }) => r.id)).toEqual(['a:1']);
  }, 30_000);

  it('a replica that stops beating without leaving (killed) counts until the liveness window has passed', async () => {
    const a = await replica('a:1', { heartbeatIntervalMs: 200, livenessWindowMs: 1_500 });
    // What a killed replica leaves behind: its row, announced at its join, never refreshed again.
    const inserted = await query(
      `INSERT INTO replicas (id, last_seen) VALUES ('killed:1', (extract(epoch from clock_timestamp()) * 1000)::bigint) RETURNING last_seen`,
    );
    // The window runs from the row's own time (the database's clock, the machine's clock here), not from when the INSERT returned.
    const lastSeen = Number((inserted.rows[0] as { last_seen: string }).last_seen);
    await query('SELECT pg_notify($1, $2)', [REPLICAS_CHANNEL, JSON.stringify({ replica: 'killed:1', event: 'join' })]);
    await until(() => a.aliveReplicas() === 2, 5_000);
    await until(() => a.aliveReplicas() === 1, 10_000);
    const freedAfter = Date.now() - lastSeen;
    // Freed after the window (never before: the others use less meanwhile), within one heartbeat and some slack after it.
    // 1 ms under the window: the row's time is rounded to the millisecond.
    expect(freedAfter).toBeGreaterThanOrEqual(1_499);
    expect(freedAfter).toBeLessThan(1_500 + 200 + 2_000);
  }, 30_000);

  it('refuses a malformed notification and keeps its count', async () => {
    const a = await replica('a:1', { ...NO_HEARTBEAT, rejectReportIntervalMs: 0 });
    await query('SELECT pg_notify($1, $2)', [REPLICAS_CHANNEL, JSON.stringify({ replica: 'x'.repeat(400), event: 'join' })]);
    await query('SELECT pg_notify($1, $2)', [REPLICAS_CHANNEL, '{"replica":"b:1","event":"crash"}']);
    await until(() => a.status.rejected === 2, 5_000);
    expect(a.aliveReplicas()).toBe(1);
  }, 30_000);
});
