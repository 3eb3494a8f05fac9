/**
 * Service keys on several replicas: three built gateway processes share one
 * real PostgreSQL (a throwaway cluster, or MANA_LLM_TEST_DATABASE_URL). A key
 * created, disabled or rotated on A holds on B and C within 200 ms (median of
 * the trials; each under a second on a loaded machine); a rotation's old key
 * works on all three until the grace ends, then on none; with PostgreSQL
 * stopped the keys known before keep working while a create answers 503
 * shared_state_unavailable and leaves nothing behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, startTestPostgres, type FakeUpstream, type TestPostgres } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { admin as adminCall } from './usage-client.js';

const ADMIN = 'admin-key-e2e-key-replicas';
const admin = (gw: GatewayProcess, path: string, method?: string, body?: unknown): Promise<{ status: number; body: Json }> => adminCall(gw, path, method, body, ADMIN);
const PROPAGATION_BOUND_MS = 200; // median: a write on A holds on B and C within this
const PROPAGATION_MAX_MS = 1_000; // any single trial, on a busy 2-core machine
const TRIALS = 5;

let postgres: TestPostgres;
let cloud: FakeUpstream;
const replicas: GatewayProcess[] = [];

beforeAll(async () => {
  [postgres, cloud] = await Promise.all([startTestPostgres(), startFakeOpenAI({ name: 'cloud' })]);
  const config = `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` + aliasesYaml({}, ['cloud/m1']);
  // One at a time: the first seeds the shared config, the others read it.
  for (const name of ['a', 'b', 'c']) {
    replicas.push(await spawnGateway({ config, env: { MANA_LLM_DATABASE_URL: postgres.url, MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_REPLICA_NAME: name } }));
  }
}, 90_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await cloud?.close();
  await postgres?.stop();
});


async function status(gw: GatewayProcess, key: string): Promise<number> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Milliseconds from `since` until `gw` answers `key` with `expected` (polled). */
async function until(gw: GatewayProcess, key: string, expected: number, since: number, timeoutMs = 5_000): Promise<number> {
  for (;;) {
    if ((await status(gw, key)) === expected) return performance.now() - since;
    if (performance.now() - since > timeoutMs) throw new Error(`${gw.url} never answered ${expected}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const median = (values: number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

describe('service keys on three replicas', () => {
  const a = (): GatewayProcess => replicas[0]!;
  const b = (): GatewayProcess => replicas[1]!;
  const c = (): GatewayProcess => replicas[2]!;
  let key: Json;

  it(`a key created on A is accepted by B and C within ${PROPAGATION_BOUND_MS} ms`, async () => {
    const created = performance.now();
    const res = await admin(a(), '/admin/keys', 'POST', { name: 'mana-api' });
    expect(res.status).toBe(201);
    key = res.body;
    const waits = await Promise.all([until(b(), key.key, 200, created), until(c(), key.key, 200, created)]);
    expect(Math.max(...waits)).toBeLessThan(PROPAGATION_MAX_MS);
    expect((await admin(c(), `/admin/keys/${key.id}`)).body.name).toBe('mana-api');
  });

  it(`a disable on A refuses on B and C within ${PROPAGATION_BOUND_MS} ms (median of ${TRIALS}); enabled again, accepted as fast`, async () => {
    const refused: number[] = [];
    const accepted: number[] = [];
    for (let i = 0; i < TRIALS; i++) {
      let since = performance.now();
      expect((await admin(a(), `/admin/keys/${key.id}`, 'PATCH', { disabled: true })).status).toBe(200);
      refused.push(Math.max(...(await Promise.all([until(b(), key.key, 401, since), until(c(), key.key, 401, since)]))));
      since = performance.now();
      await admin(a(), `/admin/keys/${key.id}`, 'PATCH', { disabled: false });
      accepted.push(Math.max(...(await Promise.all([until(b(), key.key, 200, since), until(c(), key.key, 200, since)]))));
    }
    expect(median(refused)).toBeLessThan(PROPAGATION_BOUND_MS);
    expect(median(accepted)).toBeLessThan(PROPAGATION_BOUND_MS);
    expect(Math.max(...refused, ...accepted)).toBeLessThan(PROPAGATION_MAX_MS);
  });

  it("a rotation on A: the old key works on all three until the grace ends, then on none; the new one everywhere", async () => {
    const rotated = await admin(a(), `/admin/keys/${key.id}/rotate`, 'POST', { grace: 4 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.key;
    const since = performance.now();
    await Promise.all([b(), c()].map((gw) => until(gw, fresh, 200, since)));
    for (const gw of replicas) expect(await status(gw, key.key)).toBe(200);
    await new Promise((r) => setTimeout(r, Date.parse(rotated.body.previous_secret_valid_until) - Date.now() + 100));
    for (const gw of replicas) {
      expect(await status(gw, key.key)).toBe(401);
      expect(await status(gw, fresh)).toBe(200);
    }
    key = { ...key, key: fresh };
  });

  it('a delete on A refuses on B and C', async () => {
    const doomed = (await admin(a(), '/admin/keys', 'POST', { name: 'doomed' })).body;
    await Promise.all([b(), c()].map((gw) => until(gw, doomed.key, 200, performance.now())));
    const since = performance.now();
    expect((await admin(a(), `/admin/keys/${doomed.id}`, 'DELETE')).status).toBe(200);
    const waits = await Promise.all([until(b(), doomed.key, 401, since), until(c(), doomed.key, 401, since)]);
    expect(Math.max(...waits)).toBeLessThan(PROPAGATION_MAX_MS);
  });

  it('PostgreSQL stopped: known keys keep working, a create is 503 shared_state_unavailable, and nothing of it remains', async () => {
    await postgres.pauseServer();
    try {
      for (const gw of replicas) expect(await status(gw, key.key)).toBe(200);
      const create = await admin(b(), '/admin/keys', 'POST', { name: 'during-outage' });
      expect(create.status).toBe(503);
      expect(create.body.error.code).toBe('shared_state_unavailable');
      const rotate = await admin(b(), `/admin/keys/${key.id}/rotate`, 'POST');
      expect(rotate.body.error.code).toBe('shared_state_unavailable');
      expect(await status(b(), key.key)).toBe(200);
    } finally {
      await postgres.resumeServer();
    }
    const names = async (gw: GatewayProcess) => (await admin(gw, '/admin/keys')).body.data.map((k: Json) => k.name);
    expect(await names(b())).toEqual(['mana-api']);
    // The store is back: a create works (the pool reconnects by itself).
    const deadline = Date.now() + 15_000;
    let again: { status: number; body: Json };
    do {
      again = await admin(b(), '/admin/keys', 'POST', { name: 'after-outage' });
    } while (again.status === 503 && Date.now() < deadline && (await new Promise((r) => setTimeout(r, 200))) === undefined);
    expect(again.status).toBe(201);
    await until(a(), again.body.key, 200, performance.now(), 15_000);
  }, 60_000);
});
