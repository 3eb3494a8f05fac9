/**
 * End to end with auth on: API keys for /v1/*, the admin key for /admin/reload.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const API_KEYS = ['client-key-one-5d1e', 'client-key-two-9a2b'];
const ADMIN_KEY = 'admin-key-c3f8e1';

let cloud: FakeUpstream;
let gw: GatewayProcess;
let config: string;
const bodies: string[] = [];

async function call(path: string, init: RequestInit & { key?: string } = {}): Promise<{ status: number; body: Json; headers: Headers }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  const res = await fetch(`${gw.url}${path}`, { ...init, headers });
  const text = await res.text();
  bodies.push(text);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // metrics text
  }
  return { status: res.status, body, headers: res.headers };
}

const chat = JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] });

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  config =
    `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` + aliasesYaml({}, ['cloud/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: API_KEYS.join(','), MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

describe('API keys', () => {
  it('401 missing_api_key without a key, 401 invalid_api_key with a wrong one', async () => {
    const none = await call('/v1/chat/completions', { method: 'POST', body: chat });
    expect(none.status).toBe(401);
    expect(none.body.error).toMatchObject({ code: 'missing_api_key', type: 'authentication_error' });
    const wrong = await call('/v1/chat/completions', { method: 'POST', body: chat, key: 'client-key-one-5d1f' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('invalid_api_key');
    expect((await call('/v1/models')).status).toBe(401);
    expect((await call('/v1/health')).status).toBe(401);
    expect((await call('/v1/aliases', { key: 'nope' })).status).toBe(401);
    const embeddings = JSON.stringify({ model: 'mana/embed', input: 'hi' });
    expect((await call('/v1/embeddings', { method: 'POST', body: embeddings })).body.error.code).toBe('missing_api_key');
    expect((await call('/v1/embeddings', { method: 'POST', body: embeddings, key: 'nope' })).status).toBe(401);
    expect(cloud.count()).toBe(0);
  });

  it('any configured key works, with the openai SDK too', async () => {
    const ok = await call('/v1/chat/completions', { method: 'POST', body: chat, key: API_KEYS[0] });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEYS[1], maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'mana/long-form', messages: [{ role: 'user', content: 'x' }] });
    expect(answer.choices[0]?.message.content).toContain('Hello from m1');
    const vectors = await client.embeddings.create({ model: 'mana/embed', input: ['x', 'y'] });
    expect(vectors.data).toHaveLength(2);
    const bad = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toMatchObject({ status: 401 });
    // The client's key is not forwarded upstream.
    expect(cloud.requests.every((r) => !String(r.headers.authorization ?? '').includes('client-key'))).toBe(true);
  });

  it('probes and metrics stay open for the platform', async () => {
    expect((await call('/healthz')).status).toBe(200);
    expect((await call('/readyz')).status).toBe(200);
    expect((await call('/metrics')).status).toBe(200);
  });
});

describe('POST /admin/reload', () => {
  it('401 without the admin key, 403 with a wrong one or a client key', async () => {
    const none = await call('/admin/reload', { method: 'POST' });
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('missing_admin_key');
    const wrong = await call('/admin/reload', { method: 'POST', key: 'admin-key-c3f8e2' });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.code).toBe('invalid_admin_key');
    expect((await call('/admin/reload', { method: 'POST', key: API_KEYS[0] })).status).toBe(403);
  });

  it('reloads a valid file and refuses an invalid one, the old config serving on', async () => {
    await gw.writeConfig(config.replace('aliases:\n', 'aliases:\n  mana/extra:\n    chain: [cloud/m9]\n'));
    const ok = await call('/admin/reload', { method: 'POST', key: ADMIN_KEY });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ ok: true });
    expect(ok.body.aliases).toContain('mana/extra');

    await gw.writeConfig('aliases:\n  mana/fast-text:\n    chain: []\n');
    const bad = await call('/admin/reload', { method: 'POST', key: ADMIN_KEY });
    expect(bad.status).toBe(422);
    expect(bad.body.ok).toBe(false);
    expect(typeof bad.body.error).toBe('string');

    const still = await call('/v1/chat/completions', {
      method: 'POST',
      key: API_KEYS[0],
      body: JSON.stringify({ model: 'mana/extra', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(still.status).toBe(200);
    expect(still.headers.get('x-mana-llm-resolved')).toBe('cloud/m9');
    const metrics = await call('/metrics');
    expect(metrics.body).toContain('mana_llm_config_reload_total{result="success"} 1');
    expect(metrics.body).toContain('mana_llm_config_reload_total{result="failure"} 1');
  });
});

describe('secrets', () => {
  it('no client or admin key shows in responses or logs', () => {
    const everything = bodies.join('\n') + gw.output();
    for (const key of [...API_KEYS, ADMIN_KEY]) expect(everything).not.toContain(key);
  });
});
