/**
 * Who called, end to end through the built gateway with two static keys
 * (MANA_LLM_API_KEYS) and the official openai SDK as the callers, on both
 * stores (a SQLite file and a throwaway PostgreSQL): each usage record
 * carries its key's id and name (`env-1`, `env-2`), the usage API filters by
 * key and sums by key, the request's log line names its key, and
 * `mana_llm_key_requests_total{key_name}` counts each key's requests. The
 * secrets themselves show nowhere: not in responses, logs, metrics, nor the
 * SQLite file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, startTestPostgres, type FakeUpstream, type TestPostgres } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { ADMIN } from './usage-client.js';

const KEYS = ['sk-service-one-7f3a9c1e', 'sk-service-two-b24d6e80'];
const WRONG_KEY = 'sk-service-thr-00000000';

let cloud: FakeUpstream;
beforeAll(async () => {
  cloud = await startFakeOpenAI({ name: 'cloud' });
});
afterAll(async () => {
  await cloud?.close();
});

describe.each(['sqlite', 'postgres'] as const)('key attribution on %s', (engine) => {
  let gw: GatewayProcess;
  let pg: TestPostgres | undefined;
  /** Every response body the test read, for the secrets check. */
  const bodies: string[] = [];
  /** Request ids by the key that sent them. */
  const sent = { 'env-1': [] as string[], 'env-2': [] as string[], refused: [] as string[] };

  async function admin(path: string): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, body: JSON.parse(text) };
  }

  async function metricsText(): Promise<string> {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    bodies.push(text);
    return text;
  }

  /** Polls until `count` requests are stored (the writer flushes every second). */
  async function stored(count: number): Promise<Json[]> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { status, body } = await admin('/admin/usage/requests?limit=100');
      if (status === 200 && body.data.length >= count) return body.data;
      if (Date.now() > deadline) throw new Error(`expected ${count} stored requests, have ${status === 200 ? body.data.length : status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    pg = engine === 'postgres' ? await startTestPostgres() : undefined;
    const config = `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n${aliasesYaml({}, ['cloud/m1'])}`;
    gw = await spawnGateway({
      config,
      env: { MANA_LLM_API_KEYS: KEYS.join(','), MANA_LLM_ADMIN_KEY: ADMIN, ...(pg ? { MANA_LLM_DATABASE_URL: pg.url } : {}) },
    });

    // Two requests with the first key (one a stream), one with the second, one with a wrong key.
    const one = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEYS[0], maxRetries: 0 });
    const two = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEYS[1], maxRetries: 0 });
    const wrong = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: WRONG_KEY, maxRetries: 0 });
    const ask = { model: 'mana/fast-text', messages: [{ role: 'user' as const, content: 'hi' }] };
    const plain = await one.chat.completions.create(ask).withResponse();
    bodies.push(JSON.stringify(plain.data));
    sent['env-1'].push(plain.response.headers.get('x-request-id')!);
    const stream = await one.chat.completions.create({ ...ask, stream: true }).withResponse();
    for await (const chunk of stream.data) bodies.push(JSON.stringify(chunk));
    sent['env-1'].push(stream.response.headers.get('x-request-id')!);
    const second = await two.chat.completions.create(ask).withResponse();
    bodies.push(JSON.stringify(second.data));
    sent['env-2'].push(second.response.headers.get('x-request-id')!);
    const refusal = await wrong.chat.completions.create(ask).then(
      () => undefined,
      (error: unknown) => error as { status: number; headers: Headers; error: unknown },
    );
    expect(refusal?.status).toBe(401);
    bodies.push(JSON.stringify(refusal?.error));
    sent.refused.push(refusal!.headers.get('x-request-id')!);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await pg?.stop();
  });

  it('each usage record carries the id and name of the key that sent it; a refused key, none', async () => {
    const records = await stored(4);
    const byId = new Map(records.map((r: Json) => [r.request_id, r]));
    for (const id of sent['env-1']) expect(byId.get(id)).toMatchObject({ status: 200, key_id: 'env-1', key_name: 'env-1' });
    for (const id of sent['env-2']) expect(byId.get(id)).toMatchObject({ status: 200, key_id: 'env-2', key_name: 'env-2' });
    for (const id of sent.refused) expect(byId.get(id)).toMatchObject({ status: 401, code: 'invalid_api_key', key_id: null, key_name: null });
  });

  it('the key filter answers only that key\'s requests, and refuses a bad value as the other filters do', async () => {
    await stored(4);
    const ids = async (query: string) => (await admin(`/admin/usage/requests?${query}`)).body.data.map((r: Json) => r.request_id).sort();
    expect(await ids('key=env-1')).toEqual([...sent['env-1']].sort());
    expect(await ids('key=env-2')).toEqual(sent['env-2']);
    expect(await ids('key=env-3')).toEqual([]);
    expect(await ids('key=env-1&alias=mana/fast-text')).toEqual([...sent['env-1']].sort());
    // The refused request is the only error.
    expect((await admin('/admin/usage/errors?key=env-1')).body.data).toEqual([]);
    for (const bad of ['key=', 'key=env-1&key=env-2', `key=${'k'.repeat(513)}`]) {
      const { status, body } = await admin(`/admin/usage/requests?${bad}`);
      expect(status, bad).toBe(400);
      expect(body.error, bad).toMatchObject({ code: 'invalid_usage_query', param: 'key' });
    }
  });

  it('the summary by key counts each key\'s requests, and requests without a key under null', async () => {
    await stored(4);
    const { status, body } = await admin('/admin/usage/summary?group_by=key');
    expect(status).toBe(200);
    expect(body.group_by).toBe('key');
    expect(body.data.map((r: Json) => [r.key, r.requests, r.errors])).toEqual([
      ['env-1', 2, 0],
      ['env-2', 1, 0],
      [null, 1, 1],
    ]);
    const bad = await admin('/admin/usage/summary?group_by=keys');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_usage_query', param: 'group_by', message: 'group_by must be one of alias, target, provider, key.' });
  });

  it('the request log line names its key; a refused one names none', async () => {
    for (const [key, ids] of [['env-1', sent['env-1']], ['env-2', sent['env-2']]] as const) {
      for (const id of ids) expect((await gw.waitForLog((l) => l.msg === 'request' && l.req_id === id)).key).toBe(key);
    }
    const refusedLine = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === sent.refused[0]);
    expect(refusedLine.status).toBe(401);
    expect(refusedLine).not.toHaveProperty('key');
  });

  it('mana_llm_key_requests_total counts the requests of each key, and no other metric has a key label', async () => {
    const text = await metricsText();
    expect(text).toMatch(/\nmana_llm_key_requests_total\{key_name="env-1"\} 2\n/);
    expect(text).toMatch(/\nmana_llm_key_requests_total\{key_name="env-2"\} 1\n/);
    const keyed = text.split('\n').filter((l) => !l.startsWith('#') && l.includes('key_name='));
    expect(keyed.map((l) => l.slice(0, l.indexOf('{')))).toEqual(['mana_llm_key_requests_total', 'mana_llm_key_requests_total']);
  });

  it('no key shows in responses, logs, metrics or the SQLite file', async () => {
    await stored(4);
    await metricsText();
    let everything = bodies.join('\n') + gw.output();
    if (engine === 'sqlite') {
      // The embedded store lives in the process's data folder (its temp dir, see the testkit's startGatewayProcess).
      const dataDir = join(gw.configPath, '..', 'data');
      for (const file of readdirSync(dataDir)) everything += readFileSync(join(dataDir, file)).toString('latin1');
    }
    for (const key of [...KEYS, WRONG_KEY]) expect(everything).not.toContain(key);
    // What the records do show instead.
    expect(everything).toContain('"key_name":"env-1"');
  });
});
