/**
 * Required auth, end to end: the built gateway started as an operator who uses
 * only service keys would start it — `--host 0.0.0.0`, MANA_LLM_ADMIN_KEY, no
 * MANA_LLM_API_KEYS, no --insecure. The test reaches it through 127.0.0.1
 * only. Before any service key exists every /v1 request is 401 (none serves
 * everyone); a key made through the admin API lets the official openai SDK
 * in; once the last key is deleted the gateway refuses everyone again.
 * The tests run in order and build on each other's key.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ADMIN_KEY = 'admin-key-e2e-required-7b2e';

let cloud: FakeUpstream;
let gw: GatewayProcess;
/** The gateway listens on every address; the test uses the loopback one. */
let base: string;

beforeAll(async () => {
  cloud = await startFakeOpenAI({ name: 'cloud' });
  const config = `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` + aliasesYaml({}, ['cloud/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY }, args: ['--host', '0.0.0.0'] });
  base = `http://127.0.0.1:${gw.port}`;
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

async function admin(path: string, method = 'GET', body?: unknown): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** One chat completion with raw fetch: its status and error code. */
async function chat(headers: Record<string, string> = {}): Promise<{ status: number; code: string | undefined }> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await res.json()) as Json;
  return { status: res.status, code: body.error?.code };
}

const sdk = (apiKey: string): OpenAI => new OpenAI({ apiKey, baseURL: `${base}/v1`, maxRetries: 0 });

async function sdkStatus(apiKey: string): Promise<number> {
  try {
    await sdk(apiKey).chat.completions.create({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] });
    return 200;
  } catch (error) {
    if (error instanceof OpenAI.APIError && error.status !== undefined) return error.status;
    throw error;
  }
}

describe('auth required on a non-loopback host (service keys only)', () => {
  let key: Json;

  it('starts on 0.0.0.0 with only the admin key, and its listening line says auth is required', () => {
    expect(gw.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    const listening = gw.logs.find((l) => l.msg === 'listening')!;
    expect(listening.auth).toBe('required (0 service keys)');
    expect(listening.admin).toBe('on');
  });

  it('before any key exists, every /v1 request is 401: without a key and with any key', async () => {
    expect(await chat()).toEqual({ status: 401, code: 'missing_api_key' });
    expect(await chat({ authorization: 'Bearer anything' })).toEqual({ status: 401, code: 'invalid_api_key' });
    expect(await chat({ 'x-api-key': `mk-000000000000_${'A'.repeat(43)}` })).toEqual({ status: 401, code: 'invalid_api_key' });
    expect(await sdkStatus('anything')).toBe(401);
    expect(cloud.requests.length).toBe(0);
  });

  it('a service key made through POST /admin/keys lets the openai SDK in', async () => {
    const created = await admin('/admin/keys', 'POST', { name: 'mana-api' });
    expect(created.status).toBe(201);
    key = created.body;
    const answer = await sdk(key.key).chat.completions.create({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.content).toContain('Hello');
    expect(await chat()).toEqual({ status: 401, code: 'missing_api_key' });
  });

  it('after the last key is deleted, auth stays on: 401 again', async () => {
    const deleted = await admin(`/admin/keys/${key.id}`, 'DELETE');
    expect(deleted.status).toBe(200);
    expect((await admin('/admin/keys')).body.data.filter((k: Json) => k.kind === 'service')).toEqual([]);
    expect(await sdkStatus(key.key)).toBe(401);
    expect(await chat()).toEqual({ status: 401, code: 'missing_api_key' });
    expect(await chat({ authorization: 'Bearer anything' })).toEqual({ status: 401, code: 'invalid_api_key' });
  });

  it('no secret shows in the logs', () => {
    const logs = JSON.stringify(gw.logs);
    expect(logs).not.toContain(ADMIN_KEY);
    expect(logs).not.toContain(key.key);
  });
});
