/**
 * Service keys as callers, end to end: the built gateway (embedded SQLite),
 * keys made through the admin API, the official openai SDK as the caller.
 * A key authenticates as its service (usage records carry its id and name),
 * its allow-list refuses other aliases before any upstream call, its priority
 * is the default of its requests and a ceiling, its max_concurrency is enforced, and a
 * disabled, rotated-away, expired or deleted key is refused like an unknown one,
 * also on a connection that was accepted before.
 * The tests run in order and build on each other's keys.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { admin as adminCall } from './usage-client.js';

const ADMIN_KEY = 'admin-key-e2e-key-auth-1c9d';
const SLOW_MS = 1_500;

let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI({ name: 'cloud' });
  cloud.on('slow', { kind: 'answer', headerDelayMs: SLOW_MS });
  cloud.on('drip', { kind: 'answer', content: 'one two three four', chunks: 4, chunkIntervalMs: 300 });
  const config =
    `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
    aliasesYaml({ 'mana/slow': ['cloud/slow'], 'mana/drip': ['cloud/drip'] }, ['cloud/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

const admin = (path: string, method?: string, body?: unknown): Promise<{ status: number; body: Json }> => adminCall(gw, path, method, body, ADMIN_KEY);

/** The Prometheus exposition, as a scrape reads it. */
const metricsText = async (): Promise<string> => (await fetch(`${gw.url}/metrics`)).text();

const client = (apiKey: string): OpenAI => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });

function chat(sdk: OpenAI, model: string, headers?: Record<string, string>) {
  return sdk.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }, { headers });
}

/** The SDK's error for a refused call (fails the test when the call succeeds). */
async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call;
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error('the call was not refused');
}

async function storedRequest(requestId: string | null): Promise<Json> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { body } = await admin('/admin/usage/requests?limit=100');
    const found = body.data?.find((r: Json) => r.request_id === requestId);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`request ${requestId} not stored`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every key the API showed, for the log check. */
const shown: string[] = [];

async function createKey(body: Record<string, unknown>): Promise<Json> {
  const res = await admin('/admin/keys', 'POST', body);
  expect(res.status).toBe(201);
  shown.push(res.body.key);
  return res.body;
}

describe('service keys as callers', () => {
  let batch: Json;
  let api: Json;

  it('without any key auth is off; the first service key turns it on', async () => {
    expect((await chat(client('anything'), 'mana/fast-text')).choices[0]?.message.content).toContain('Hello');
    batch = await createKey({ name: 'import-batch', aliases: ['mana/fast-text', 'mana/slow', 'mana/drip'], priority: 'background', max_concurrency: 1 });
    api = await createKey({ name: 'mana-api' });
    const missing = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"mana/fast-text","messages":[]}' });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as Json).error.code).toBe('missing_api_key');
    const wrong = await refusal(chat(client('mk-000000000000_' + 'A'.repeat(43)), 'mana/fast-text'));
    expect(wrong.status).toBe(401);
    expect(wrong.code).toBe('invalid_api_key');
  });

  it('a service key authenticates as its service: the usage record carries its id and name', async () => {
    const { data, response } = await chat(client(api.key), 'mana/long-form').withResponse();
    expect(data.choices[0]?.message.content).toContain('Hello');
    const record = await storedRequest(response.headers.get('x-request-id'));
    expect(record).toMatchObject({ key_id: api.id, key_name: 'mana-api' });
    expect(JSON.stringify(record)).not.toContain(api.key.slice(16));
    // last_used_at is noted at once in memory, written to the store in the background.
    expect(Date.parse((await admin(`/admin/keys/${api.id}`)).body.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('an alias outside the allow-list is 403 alias_not_allowed, before any upstream call', async () => {
    const before = cloud.requests.length;
    const refused = await refusal(chat(client(batch.key), 'mana/long-form'));
    expect(refused.status).toBe(403);
    expect(refused.code).toBe('alias_not_allowed');
    expect(refused.message).toContain('mana/fast-text');
    // No model: the default alias (mana/fast-text) is on its list.
    const noModel = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${batch.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(noModel.status).toBe(200);
    expect(cloud.requests.length).toBe(before + 1);
  });

  it('count_tokens applies the allow-list too: 403 alias_not_allowed for another alias or a provider/model, a count for its own', async () => {
    const sdk = new Anthropic({ apiKey: batch.key, baseURL: gw.url, maxRetries: 0 });
    const count = (model: string) => sdk.messages.countTokens({ model, messages: [{ role: 'user', content: 'How many tokens is this?' }] });
    expect((await count('mana/fast-text')).input_tokens).toBeGreaterThan(0);
    for (const model of ['mana/long-form', 'cloud/m1']) {
      const refused = await count(model).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Anthropic.APIError);
      const error = refused as InstanceType<typeof Anthropic.APIError>;
      expect(error.status).toBe(403);
      expect(error.error).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'alias_not_allowed' } });
    }
  });

  it("the key's priority is its requests' default and a ceiling: a background key's header cannot raise it", async () => {
    const sdk = client(batch.key);
    const own = await chat(sdk, 'mana/fast-text').withResponse();
    const told = await chat(sdk, 'mana/fast-text', { 'x-mana-llm-priority': 'realtime' }).withResponse();
    expect((await storedRequest(own.response.headers.get('x-request-id'))).priority).toBe('background');
    expect((await storedRequest(told.response.headers.get('x-request-id'))).priority).toBe('background');
  });

  it('a realtime key may still ask for background', async () => {
    const live = await createKey({ name: 'live-api', priority: 'realtime' });
    const sdk = client(live.key);
    const own = await chat(sdk, 'mana/fast-text').withResponse();
    const told = await chat(sdk, 'mana/fast-text', { 'x-mana-llm-priority': 'background' }).withResponse();
    expect((await storedRequest(own.response.headers.get('x-request-id'))).priority).toBe('realtime');
    expect((await storedRequest(told.response.headers.get('x-request-id'))).priority).toBe('background');
    // The later tests count the keys: this one goes again.
    expect((await admin(`/admin/keys/${live.id}`, 'DELETE')).status).toBeLessThan(300);
  });

  it('max_concurrency: a second request in flight is 429 key_concurrency_exceeded with Retry-After; the slot frees when the first ends', async () => {
    const sdk = client(batch.key);
    const first = chat(sdk, 'mana/slow');
    await cloud.waitForRequest((r) => r.model === 'slow');
    const second = await refusal(chat(sdk, 'mana/fast-text'));
    expect(second.status).toBe(429);
    expect(second.code).toBe('key_concurrency_exceeded');
    expect(second.headers?.get('retry-after')).toBe('1');
    // Another key is not held by it.
    expect((await chat(client(api.key), 'mana/fast-text')).choices).toHaveLength(1);
    expect((await first).choices).toHaveLength(1);
    expect((await chat(sdk, 'mana/fast-text')).choices).toHaveLength(1);
  });

  it('max_concurrency holds a stream until its last event', async () => {
    const sdk = client(batch.key);
    const stream = await sdk.chat.completions.create({ model: 'mana/drip', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const chunks = stream[Symbol.asyncIterator]();
    await chunks.next(); // the head and a first event are out: the stream is in flight
    expect((await refusal(chat(sdk, 'mana/fast-text'))).code).toBe('key_concurrency_exceeded');
    let text = '';
    for (let next = await chunks.next(); next.done !== true; next = await chunks.next()) text += next.value.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    expect((await chat(sdk, 'mana/fast-text')).choices).toHaveLength(1);
  });

  it('a disabled key is refused as an unknown one, also on a connection accepted before; enabled again it works', async () => {
    const sdk = client(api.key); // keep-alive: the SDK reuses its connection
    await chat(sdk, 'mana/fast-text');
    expect((await admin(`/admin/keys/${api.id}`, 'PATCH', { disabled: true })).status).toBe(200);
    const refused = await refusal(chat(sdk, 'mana/fast-text'));
    const unknown = await refusal(chat(client('mk-000000000000_' + 'B'.repeat(43)), 'mana/fast-text'));
    expect([refused.status, refused.code, refused.message]).toEqual([unknown.status, unknown.code, unknown.message]);
    expect(refused.code).toBe('invalid_api_key');
    await admin(`/admin/keys/${api.id}`, 'PATCH', { disabled: false });
    expect((await chat(sdk, 'mana/fast-text')).choices).toHaveLength(1);
  });

  it('rotation: the old key works until its grace ends, then only the new one', async () => {
    const old = client(api.key);
    await chat(old, 'mana/fast-text');
    // A grace of seconds, not milliseconds: on a loaded machine a request may take a second.
    const rotated = await admin(`/admin/keys/${api.id}/rotate`, 'POST', { grace: 5 });
    expect(rotated.status).toBe(200);
    shown.push(rotated.body.key);
    const fresh = client(rotated.body.key);
    expect((await chat(old, 'mana/fast-text')).choices).toHaveLength(1);
    expect((await chat(fresh, 'mana/fast-text')).choices).toHaveLength(1);
    await new Promise((r) => setTimeout(r, Date.parse(rotated.body.previous_secret_valid_until) - Date.now() + 100));
    expect((await refusal(chat(old, 'mana/fast-text'))).code).toBe('invalid_api_key');
    expect((await chat(fresh, 'mana/fast-text')).choices).toHaveLength(1);

    const again = await admin(`/admin/keys/${api.id}/rotate`, 'POST', { grace: 0 });
    expect((await refusal(chat(fresh, 'mana/fast-text'))).code).toBe('invalid_api_key');
    shown.push(again.body.key);
    api = { ...api, key: again.body.key };
  });

  it('an expired key is refused from its expires_at on', async () => {
    const sdk = client(api.key);
    const expiresAt = new Date(Date.now() + 3_000).toISOString();
    await admin(`/admin/keys/${api.id}`, 'PATCH', { expires_at: expiresAt });
    expect((await chat(sdk, 'mana/fast-text')).choices).toHaveLength(1);
    await new Promise((r) => setTimeout(r, Date.parse(expiresAt) - Date.now() + 100));
    expect((await refusal(chat(sdk, 'mana/fast-text'))).code).toBe('invalid_api_key');
  });

  it('a deleted key is refused, and its series leaves mana_llm_key_requests_total; with no key left auth is off again', async () => {
    const sdk = client(batch.key);
    await chat(sdk, 'mana/fast-text');
    const series = `mana_llm_key_requests_total{key_name="${batch.name}"}`;
    expect(await metricsText()).toContain(series);
    await admin(`/admin/keys/${batch.id}`, 'DELETE');
    expect((await refusal(chat(sdk, 'mana/fast-text'))).code).toBe('invalid_api_key');
    // Bounded by the keys there are: a deleted key's name is not kept as a label value.
    expect(await metricsText()).not.toContain(series);
    await admin(`/admin/keys/${api.id}`, 'DELETE');
    expect((await chat(client('anything'), 'mana/fast-text')).choices).toHaveLength(1);
  });

  it('no secret in the log', () => {
    for (const key of shown) expect(gw.output()).not.toContain(key.slice(16));
  });
});
