import { HealthCache, parseConfig, type ConfigSnapshot, type HealthTransition } from '@mana/llm-router';
import { startTestPostgres, type TestPostgres } from '@mana/llm-testkit';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_CHANNEL } from './health-rows.js';
import { CONFIG_CHANNEL, type ConfigNotice } from './shared-config.js';
import { SharedState, type SharedStateOptions } from './shared-state.js';

const CONFIG = `providers:
  gpu: { type: openai, base_url: http://127.0.0.1:9/v1, api_key_required: false }
aliases:
  mana/fast-text: [gpu/small]
  mana/long-form: [gpu/small]
  mana/structured: [gpu/small]
  mana/reasoning: [gpu/small]
  mana/vision: [gpu/small]
  mana/embed: { kind: embedding, embedding_space: test, chain: [gpu/embed] }
`;

let postgres: TestPostgres;
const open: SharedState[] = [];
let snapshot: ConfigSnapshot;

beforeAll(async () => {
  postgres = await startTestPostgres();
  snapshot = parseConfig(CONFIG, { source: 'test.yaml', env: {} });
}, 60_000);

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
  // Each test starts from an empty shared state (the table outlives the replicas, as in production).
  const client = new pg.Client({ connectionString: postgres.url });
  client.on('error', () => undefined); // a dropped connection fails the query in flight; unheard, it would end the test process
  await client.connect();
  await client.query('DELETE FROM health_transitions').catch(() => undefined);
  await client.end();
});

afterAll(async () => {
  await postgres?.stop();
});

interface Replica {
  readonly name: string;
  readonly cache: HealthCache;
  readonly shared: SharedState;
  readonly notices: ConfigNotice[];
  /** Starts the shared state, following its config notices as a replica serving version v1. */
  start(timeoutMs: number): Promise<boolean>;
}

function replica(name: string, reconcileIntervalMs = 3_000, extra: Partial<SharedStateOptions> = {}): Replica {
  const cache = new HealthCache({ now: Date.now });
  const notices: ConfigNotice[] = [];
  const shared = new SharedState({
    ...extra,
    url: postgres.url,
    replica: name,
    applyTransition: (t) => cache.applyTransition(t),
    reconcileIntervalMs,
  });
  cache.observeTransitions((t) => shared.publish(t));
  open.push(shared);
  const follower = { currentVersion: 'v1', onConfigChanged: (notice: ConfigNotice) => notices.push(notice) };
  return { name, cache, shared, notices, start: (timeoutMs) => shared.start(timeoutMs, follower) };
}

const gpuTarget = () => snapshot.aliases.get('mana/fast-text')!.chain[0]!;
const skips = (r: Replica) => !r.cache.check(gpuTarget(), snapshot.providers.get('gpu')).ok;

async function until(condition: () => boolean, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
  return performance.now() - start;
}

function openBreaker(r: Replica): void {
  const settings = snapshot.providers.get('gpu')!.settings;
  for (let i = 0; i < settings.failureThreshold; i++) r.cache.reportFailure('gpu', 'connect_refused', settings);
}

describe('SharedState (real PostgreSQL)', () => {
  // The time bound (p99 < 100 ms) is measured over 50 trials on built gateways in apps/llm-gateway's
  // replicas.e2e.test.ts; one cold sample here (the first transition of a fresh pair) is no percentile,
  // and read 156 ms once under a CPU hog with every package's tests running at once.
  it('a breaker opened on A is skipped on B, and B does not announce it again', async () => {
    const a = replica('a');
    const b = replica('b');
    expect(await a.start(10_000)).toBe(true);
    expect(await b.start(10_000)).toBe(true);
    expect(skips(b)).toBe(false);
    openBreaker(a);
    await until(() => skips(b), 1_000);
    expect(b.shared.status).toMatchObject({ state: 'ok', applied: 1, published: 0 });
    await until(() => a.shared.status.published === 1, 1_000);
    expect(a.shared.status.applied).toBe(0); // its own notification came back and was ignored

    a.cache.reportSuccess('gpu');
    await until(() => !skips(b), 1_000);
    expect(b.shared.status.published).toBe(0);
  });

  it('a replica that starts later reads the current state before start() resolves', async () => {
    const a = replica('a');
    await a.start(10_000);
    openBreaker(a);
    a.cache.coolDown('gpu/other', Date.now() + 60_000, 'rate_limited');
    await until(() => a.shared.status.published === 2, 2_000);
    const c = replica('c');
    expect(await c.start(10_000)).toBe(true);
    expect(skips(c)).toBe(true);
    expect(c.cache.cooldownOf('gpu/other')?.reason).toBe('rate_limited');
  });

  it('notifications and rows that fail their checks are dropped, counted, and reported at most once per interval', async () => {
    const reports: { dropped: number; problem: string }[] = [];
    const a = replica('a', 3_000, { onRejected: (report) => reports.push(report), rejectReportIntervalMs: 60_000 });
    await a.start(10_000);
    const sender = new pg.Client({ connectionString: postgres.url });
    sender.on('error', () => undefined); // a dropped connection fails the query in flight; unheard, it would end the test process
    await sender.connect();
    try {
      const at = Date.now();
      const bad = [
        { subject: 'provider:gpu', kind: 'provider_unhealthy', until: at + 60_000, reason: 42, at, replica: 'x' }, // a TypeError in redaction before
        { subject: 'provider:gpu', kind: 'provider_unhealthy', until: at + 60_000, reason: 'x', at: 'now', replica: 'x' },
        'not json',
      ];
      for (const payload of bad) await sender.query('select pg_notify($1, $2)', [HEALTH_CHANNEL, typeof payload === 'string' ? payload : JSON.stringify(payload)]);
      await sender.query('select pg_notify($1, $2)', [CONFIG_CHANNEL, JSON.stringify({ version: { v: 1 }, replica: 'x' })]);
      await until(() => a.shared.status.rejected === 4, 2_000);
      expect(reports).toEqual([{ dropped: 1, problem: 'reason must be a string of at most 500 characters' }]);
      expect(a.notices).toEqual([]);
      expect(skips(a)).toBe(false);
      // A row far in the future is held to an hour after it was written (and read again every round unchanged).
      await sender.query(`insert into health_transitions (subject, kind, until, reason, at, replica) values ('target:gpu/small', 'cooldown', 9000000000000000000, 'rate_limited', $1, 'x')`, [at]);
      await a.shared.close(); // a replica starting now reads it
      const b = replica('b', 3_000, { onRejected: (report) => reports.push(report) });
      await b.start(10_000);
      expect(b.cache.cooldownOf('gpu/small')?.until).toBe(at + 3_600_000);
      expect(skips(b)).toBe(true);
    } finally {
      await sender.end();
    }
  });

  it('config: the seed is kept by the first replica, a swap needs the current version, and others are told', async () => {
    const a = replica('a');
    const b = replica('b');
    await a.start(10_000);
    await b.start(10_000);
    const write = (version: string) => ({ version, text: `# ${version}\n${CONFIG}`, source: 'admin', replica: 'a', time: Date.now() });
    const first = await a.shared.readConfig();
    const seeded = await b.shared.seedConfig({ ...write(first?.version ?? 's1'), source: 'startup', replica: 'b' });
    expect((await a.shared.seedConfig({ ...write('other'), source: 'startup' })).version).toBe(seeded.version);

    const stale = await a.shared.swapConfig('not-the-current', write('v2'));
    expect(stale).toEqual({ ok: false, current: expect.objectContaining({ version: seeded.version }) });
    expect(await a.shared.swapConfig(seeded.version, write('v2'))).toEqual({ ok: true });
    await until(() => b.notices.some((n) => n.version === 'v2'), 1_000);
    expect(await b.shared.readConfig()).toMatchObject({ version: 'v2', replica: 'a' });
  });

  it('PostgreSQL stopped: degraded, transitions wait, and after it returns they reach the other replica', async (ctx) => {
    if (!postgres.ownsServer) return ctx.skip('an external PostgreSQL server is not this test\'s to stop');
    const a = replica('a', 500);
    const b = replica('b', 500);
    await a.start(10_000);
    await b.start(10_000);
    await postgres.pauseServer();
    try {
      await until(() => a.shared.status.state === 'degraded' && b.shared.status.state === 'degraded', 5_000);
      openBreaker(a);
      expect(skips(a)).toBe(true); // the local cache does not wait for anyone
      await until(() => a.shared.status.pending === 1, 2_000);
      expect(skips(b)).toBe(false);
    } finally {
      await postgres.resumeServer();
    }
    await until(() => skips(b), 15_000);
    await until(() => a.shared.status.state === 'ok' && b.shared.status.state === 'ok', 15_000);
    expect(a.shared.status.pending).toBe(0);
  }, 40_000);

  it('nothing is published or applied after close', async () => {
    const a = replica('a');
    await a.start(10_000);
    await a.shared.close();
    const t: HealthTransition = { kind: 'cooldown', subject: 'gpu/small', until: Date.now() + 1_000, reason: 'x', at: Date.now() };
    a.shared.publish(t);
    expect(a.shared.status.pending).toBe(0);
  });
});
