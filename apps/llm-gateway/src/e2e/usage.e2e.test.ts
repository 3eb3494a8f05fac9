/**
 * Usage recording end to end, through the built gateway process, on both stores:
 * the embedded SQLite file (MANA_LLM_DATA_DIR) and PostgreSQL
 * (MANA_LLM_DATABASE_URL; a throwaway cluster or MANA_LLM_TEST_DATABASE_URL).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pgDriver from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, startTestPostgres, waitUntil, type FakeUpstream, type TestPostgres } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { ADMIN, ALIAS, admin, chat, metric, storedRequest, storedRequests } from './usage-client.js';

// Fake upstream usage × the configured price of b (USD per million tokens).
const PROMPT = 120;
const COMPLETION = 30;
const PRICE = { input: 2, output: 8 };
const COST = (PROMPT * PRICE.input + COMPLETION * PRICE.output) / 1_000_000;
// A refusal that mana/structured fails over from: billed by the upstream, so recorded with its cost.
const REFUSED_ALIAS = 'mana/structured';
const REFUSED = { prompt: 40, completion: 7, price: { input: 3, output: 15 } };
const REFUSED_COST = (REFUSED.prompt * REFUSED.price.input + REFUSED.completion * REFUSED.price.output) / 1_000_000;

let a: FakeUpstream;
let b: FakeUpstream;

beforeAll(async () => {
  a = await startFakeOpenAI({ name: 'a' });
  b = await startFakeOpenAI({ name: 'b' });
  a.on('m1', { kind: 'status', status: 503 });
  a.on('m3', { kind: 'answer', refusal: 'I cannot help with that.', usage: { prompt_tokens: REFUSED.prompt, completion_tokens: REFUSED.completion } });
  b.on('m2', { kind: 'answer', content: 'rescued answer', chunks: 3, usage: { prompt_tokens: PROMPT, completion_tokens: COMPLETION } });
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

function config(): string {
  return (
    `settings:\n  probe_interval: 60s\n  failure_threshold: 1000\n` +
    `providers:\n` +
    `  a: { type: openai, base_url: "${a.baseUrl}", api_key: "sk-a" }\n` +
    `  b: { type: openai, base_url: "${b.baseUrl}", api_key: "sk-b", price: { input: ${PRICE.input}, output: ${PRICE.output} } }\n` +
    aliasesYaml(
      { [ALIAS]: ['a/m1', 'b/m2'], [REFUSED_ALIAS]: [`{ target: a/m3, price: { input: ${REFUSED.price.input}, output: ${REFUSED.price.output} } }`, 'b/m2'] },
      ['b/m2'],
    ).replace(`  ${REFUSED_ALIAS}:\n`, `  ${REFUSED_ALIAS}:\n    fail_over_on: [refusal]\n`)
  );
}

async function readStream(res: Response): Promise<Json[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .map((e) => e.replace(/^data: /, '').trim())
    .filter((d) => d !== '' && d !== '[DONE]')
    .map((d) => JSON.parse(d));
}

describe.each(['sqlite', 'postgres'] as const)('usage recording on %s', (engine) => {
  let gw: GatewayProcess;
  let pg: TestPostgres | undefined;

  beforeAll(async () => {
    pg = engine === 'postgres' ? await startTestPostgres() : undefined;
    gw = await spawnGateway({ config: config(), env: { MANA_LLM_ADMIN_KEY: ADMIN, ...(pg ? { MANA_LLM_DATABASE_URL: pg.url } : {}) } });
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await pg?.stop();
  });

  it('a failed-over request: one request (200, 2 attempts), two attempt records, the first failed_over; summary 1 / 1 / 1', async () => {
    const res = await chat(gw, {});
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    const [stored] = await storedRequests(gw, 1);
    expect(stored).toMatchObject({ status: 200, alias: ALIAS, target: 'b/m2', attempts_count: 2, failovers: 1, rescued: true });
    expect(stored.request_id).toBe(res.headers.get('x-request-id'));
    expect(stored.attempts.map((x: Json) => [x.target, x.outcome, x.upstream_status, x.failed_over])).toEqual([
      ['a/m1', 'failed', 503, true],
      ['b/m2', 'ok', 200, false],
    ]);
    expect(stored).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: COMPLETION });
    expect(stored.cost_usd).toBeCloseTo(COST, 12);
    expect(stored.attempts[0].cost_usd).toBeNull();

    const summary = await admin(gw, '/admin/usage/summary?group_by=alias');
    expect(summary.status).toBe(200);
    expect(summary.body.data).toEqual([expect.objectContaining({ alias: ALIAS, requests: 1, errors: 1, rescued: 1 })]);
    const byTarget = await admin(gw, '/admin/usage/summary?group_by=target');
    expect(byTarget.body.data.map((r: Json) => [r.target, r.requests, r.errors])).toEqual([
      ['b/m2', 1, 0],
      ['a/m1', 0, 1],
    ]);
  });

  it('without --replica-name the replica is <hostname>:<port>, the port bound for --port 0: on records, in /v1/health and on the shared config row it seeded', async () => {
    const name = `${hostname()}:${gw.port}`;
    expect((await storedRequests(gw, 1)).map((r: Json) => r.replica)).toEqual([name]);
    const health = (await (await fetch(`${gw.url}/v1/health`)).json()) as Json;
    if (pg === undefined) {
      expect(health.shared).toEqual({ state: 'off' });
      return;
    }
    expect(health.shared.replica).toBe(name);
    const client = new pgDriver.Client({ connectionString: pg.url });
    await client.connect();
    try {
      // Seeded at start, before the first request could reach this replica.
      expect((await client.query('select replica from shared_config')).rows).toEqual([{ replica: name }]);
    } finally {
      await client.end();
    }
  });

  it('tokens and cost of streams too, whether or not the client asked for usage; the client sees only what it asked for', async () => {
    const plain = await readStream(await chat(gw, { stream: true }));
    expect(plain.some((c) => 'usage' in c)).toBe(false);
    const asked = await readStream(await chat(gw, { stream: true, stream_options: { include_usage: true } }));
    expect(asked.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: PROMPT, completion_tokens: COMPLETION } });

    const stored = await storedRequests(gw, 3);
    const streams = stored.filter((r: Json) => r.stream);
    expect(streams).toHaveLength(2);
    for (const r of streams) {
      // (a/m1 may be skipped by now, after its 503: then b answers at once.)
      expect(r).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: COMPLETION, target: 'b/m2' });
      expect(r.attempts.at(-1)).toMatchObject({ target: 'b/m2', prompt_tokens: PROMPT, completion_tokens: COMPLETION });
      expect(r.cost_usd).toBeCloseTo(COST, 12);
    }
    expect(await metric(gw, `mana_llm_tokens_total{alias="${ALIAS}",target="b/m2",kind="prompt"}`)).toBe(3 * PROMPT);
    expect(await metric(gw, `mana_llm_tokens_total{alias="${ALIAS}",target="b/m2",kind="completion"}`)).toBe(3 * COMPLETION);
    expect(await metric(gw, `mana_llm_cost_usd_total{alias="${ALIAS}",target="b/m2"}`)).toBeCloseTo(3 * COST, 12);
    expect(await metric(gw, 'mana_llm_usage_events_dropped_total')).toBe(0);
    // The errors view lists requests that failed or carry a failed-over attempt: here the first only.
    const errors = await admin(gw, '/admin/usage/errors');
    expect(errors.body.data.map((r: Json) => r.failovers)).toEqual([1]);
  });

  it('a refused answer that was failed over: its billed tokens and cost are on its attempt and in the request cost', async () => {
    const res = await chat(gw, {}, REFUSED_ALIAS);
    expect(res.status).toBe(200);
    const stored = await storedRequest(gw, res.headers.get('x-request-id'));
    expect(stored.attempts.map((x: Json) => [x.target, x.outcome, x.reason, x.failed_over, x.prompt_tokens, x.completion_tokens])).toEqual([
      ['a/m3', 'failed', 'refusal', true, REFUSED.prompt, REFUSED.completion],
      ['b/m2', 'ok', 'ok', false, PROMPT, COMPLETION],
    ]);
    expect(stored.attempts[0].cost_usd).toBeCloseTo(REFUSED_COST, 12);
    // The request's tokens are the answer's; its cost is what every call was billed.
    expect(stored).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: COMPLETION });
    expect(stored.cost_usd).toBeCloseTo(REFUSED_COST + COST, 12);
    expect(await metric(gw, `mana_llm_tokens_total{alias="${REFUSED_ALIAS}",target="a/m3",kind="prompt"}`)).toBe(REFUSED.prompt);
    expect(await metric(gw, `mana_llm_cost_usd_total{alias="${REFUSED_ALIAS}",target="a/m3"}`)).toBeCloseTo(REFUSED_COST, 12);
    const summary = await admin(gw, '/admin/usage/summary?group_by=target');
    const refusing = summary.body.data.find((r: Json) => r.target === 'a/m3');
    expect(refusing).toMatchObject({ requests: 0, errors: 1, prompt_tokens: REFUSED.prompt, completion_tokens: REFUSED.completion });
    expect(refusing.cost_usd).toBeCloseTo(REFUSED_COST, 12);
  });

  it.each([
    ['limit=1000000000', 'limit'],
    ['since=2026-12-01T00:00:00Z&until=2026-11-01T00:00:00Z', 'since'],
    ['status=abc', 'status'],
    ['failed_over=yes', 'failed_over'],
    ['since=yesterday', 'since'],
    ['cursor=bm9wZQ', 'cursor'],
    ['alias=a&alias=b', 'alias'],
  ])('a bad filter (%s) is a 400 naming the parameter', async (query, param) => {
    const { status, body } = await admin(gw, `/admin/usage/requests?${query}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_usage_query', param });
  });

  // One past the last millisecond a Date can hold (±8.64e15 ms, ±100,000,000 days around 1970).
  it.each(['/admin/usage/requests', '/admin/usage/errors', '/admin/usage/summary'].flatMap((path) => [`${path}?since=8640000000000001`, `${path}?until=8640000000000001`]))(
    'a time past the last date (%s) is a 400 naming the parameter, not a store failure',
    async (path) => {
      const { status, body } = await admin(gw, path);
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ code: 'invalid_usage_query', param: path.includes('since=') ? 'since' : 'until' });
      expect(gw.logs.filter((l) => l.msg === 'usage query failed')).toEqual([]);
    },
  );

  it('SQL metacharacters in every filter are plain text; unknown group_by is a 400; no admin key is a 401', async () => {
    const nasty = encodeURIComponent(`' OR 1=1; DROP TABLE usage_requests; --`);
    const { status, body } = await admin(gw, `/admin/usage/requests?alias=${nasty}&target=${nasty}&code=${nasty}`);
    expect(status).toBe(200);
    expect(body.data).toEqual([]);
    expect((await storedRequests(gw, 3)).length).toBeGreaterThanOrEqual(3);
    expect((await admin(gw, '/admin/usage/summary?group_by=alias;drop')).status).toBe(400);
    expect((await fetch(`${gw.url}/admin/usage/summary`)).status).toBe(401);
  });

  it('/v1/health reports the store as ok', async () => {
    const health: Json = await (await fetch(`${gw.url}/v1/health`)).json();
    expect(health.usage).toMatchObject({ status: 'ok', store: engine === 'sqlite' ? expect.stringMatching(/^sqlite:.*usage\.sqlite$/) : expect.stringMatching(/^postgres:\/\/127\.0\.0\.1:\d+\//) });
    expect(JSON.stringify(health)).not.toContain('@127.0.0.1'); // no credentials of the URL
  });
});

describe('usage recording under faults', () => {
  it('SQLite: the database file deleted under load — requests keep succeeding, recording resumes in a new file', async () => {
    const gw = await spawnGateway({ config: config(), env: { MANA_LLM_ADMIN_KEY: ADMIN } });
    try {
      expect((await chat(gw, {})).status).toBe(200);
      await storedRequests(gw, 1);
      const file = ((await (await fetch(`${gw.url}/v1/health`)).json()) as Json).usage.store.slice('sqlite:'.length);
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
      for (let i = 0; i < 5; i++) expect((await chat(gw, {})).status).toBe(200);
      const stored = await storedRequests(gw, 5);
      expect(stored).toHaveLength(5); // the new file holds what came after the deletion
    } finally {
      await gw.stop();
    }
  }, 60_000);

  it('PostgreSQL stopped mid-load: requests keep succeeding at normal speed, health and metric show it, the queued records arrive once it is back', async (ctx) => {
    const pg = await startTestPostgres();
    if (!pg.ownsServer) {
      await pg.stop();
      return ctx.skip('an external PostgreSQL server is not this test\'s to stop');
    }
    const gw = await spawnGateway({ config: config(), env: { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATABASE_URL: pg.url } });
    try {
      expect((await chat(gw, {})).status).toBe(200);
      await storedRequests(gw, 1);
      await pg.pauseServer();
      const started = performance.now();
      for (let i = 0; i < 10; i++) expect((await chat(gw, {})).status).toBe(200);
      // Ten requests through a two-target failover on loopback; the store being down adds nothing.
      expect(performance.now() - started).toBeLessThan(3_000);
      await waitUntil('/v1/health to show the usage store failing', async () => ((await (await fetch(`${gw.url}/v1/health`)).json()) as Json).usage.status === 'failing', 8_000);
      const health: Json = await (await fetch(`${gw.url}/v1/health`)).json();
      expect(health.status).toBe('degraded');
      expect(health.usage.queued).toBe(10);
      expect(await metric(gw, 'mana_llm_usage_store_up')).toBe(0);
      expect((await admin(gw, '/admin/usage/requests')).status).toBe(503);
      await pg.resumeServer();
      expect(await storedRequests(gw, 11, 15_000)).toHaveLength(11);
      expect(await metric(gw, 'mana_llm_usage_store_up')).toBe(1);
    } finally {
      await gw.stop();
      await pg.stop();
    }
  }, 90_000);

  it('kill -9 after a flush interval: the store reopens cleanly on restart with every request', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mana-usage-kill-'));
    try {
      const env = { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATA_DIR: dataDir };
      const first = await spawnGateway({ config: config(), env });
      for (let i = 0; i < 20; i++) expect((await chat(first, {})).status).toBe(200);
      await storedRequests(first, 20); // written: at most the last flush interval (1 s) can be lost
      first.signal('SIGKILL');
      await first.stop();
      const second = await spawnGateway({ config: config(), env });
      try {
        expect(await storedRequests(second, 20)).toHaveLength(20);
        expect((await chat(second, {})).status).toBe(200);
        expect(await storedRequests(second, 21)).toHaveLength(21);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
