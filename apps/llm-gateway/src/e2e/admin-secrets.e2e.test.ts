/**
 * Secrets written through the admin API, end to end: the built gateway, real
 * HTTP, and the YAML read back from disk.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, chatOnce, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ADMIN_KEY = 'admin-key-e2e-secrets-2c7e';
const KEY_DASH = 'sk-literal-dash-e2e-41aa';
const KEY_UNDERSCORE = 'sk-literal-underscore-e2e-93bd';
const LEGACY_KEY = 'sk-legacy-file-e2e-70fe';

let one: FakeUpstream;
let two: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  one = await startFakeOpenAI({ name: 'one' });
  two = await startFakeOpenAI({ name: 'two' });
  const config =
    'providers:\n' +
    `  ok: { type: openai, base_url: "${one.baseUrl}", api_key_required: false }\n` +
    // As an earlier gateway wrote a_c's literal key: under the name a-c's key would get today.
    `  a_c: { type: openai, base_url: "${two.baseUrl}", api_key: "\${MANA_LLM_SECRET_A_C_API_KEY}" }\n` +
    aliasesYaml({ 'mana/a-c-legacy': ['a_c/m'] }, ['ok/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([one?.close(), two?.close()]);
});

async function admin(path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${gw.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

const yaml = (): Promise<string> => readFile(gw.configPath, 'utf8');

/** The authorization header upstream `fake` saw on the last chat call to `alias`. */
async function keySeenUpstream(fake: FakeUpstream, alias: string): Promise<string | undefined> {
  fake.reset();
  expect((await chatOnce(gw.url, alias)).status).toBe(200);
  return fake.requests.at(-1)?.headers.authorization as string | undefined;
}

describe('secret variable names are unique per provider', () => {
  it('a-b and a_b each keep their own literal key: writing one does not replace the other', async () => {
    expect((await admin('/admin/providers/a-b', { method: 'PUT', body: { type: 'openai', base_url: one.baseUrl, api_key: KEY_DASH } })).status).toBe(201);
    const underscore = await admin('/admin/providers/a_b', { method: 'PUT', body: { type: 'openai', base_url: two.baseUrl, api_key: KEY_UNDERSCORE } });
    expect(underscore.status).toBe(201);
    const dash = await admin('/admin/providers/a-b');
    expect(dash.body.api_key_env).toBe('MANA_LLM_SECRET_A_B_API_KEY');
    expect(underscore.body.api_key_env).toBe('MANA_LLM_SECRET_A_B_API_KEY_2');

    expect((await admin('/admin/aliases/mana/a-b', { method: 'PUT', body: { chain: ['a-b/m'] } })).status).toBe(201);
    expect((await admin('/admin/aliases/mana/a_b', { method: 'PUT', body: { chain: ['a_b/m'] } })).status).toBe(201);
    expect(await keySeenUpstream(one, 'mana/a-b')).toBe(`Bearer ${KEY_DASH}`);
    expect(await keySeenUpstream(two, 'mana/a_b')).toBe(`Bearer ${KEY_UNDERSCORE}`);

    // Rewriting a_b's key reuses its own name and leaves a-b's alone.
    expect((await admin('/admin/providers/a_b', { method: 'PATCH', body: { api_key: `${KEY_UNDERSCORE}-2` } })).body.api_key_env).toBe('MANA_LLM_SECRET_A_B_API_KEY_2');
    expect(await keySeenUpstream(one, 'mana/a-b')).toBe(`Bearer ${KEY_DASH}`);
    expect(await keySeenUpstream(two, 'mana/a_b')).toBe(`Bearer ${KEY_UNDERSCORE}-2`);
  });

  it('a file an earlier gateway wrote stays readable: a new provider whose name maps to a variable already in use gets another', async () => {
    const before = await yaml();
    expect((await admin('/admin/providers/a_c', { method: 'PATCH', body: { api_key: LEGACY_KEY } })).body.api_key_env).toBe('MANA_LLM_SECRET_A_C_API_KEY');
    const created = await admin('/admin/providers/a-c', { method: 'PUT', body: { type: 'openai', base_url: one.baseUrl, api_key: KEY_DASH } });
    expect(created.status).toBe(201);
    expect(created.body.api_key_env).toBe('MANA_LLM_SECRET_A_C_API_KEY_2');
    expect(await yaml()).toContain(before.split('\n').find((line) => line.startsWith('  a_c:')));
    expect(await keySeenUpstream(two, 'mana/a-c-legacy')).toBe(`Bearer ${LEGACY_KEY}`);
  });
});
