/**
 * Secrets written through the admin API, end to end: the built gateway, real
 * HTTP, and every place a config is kept read back from disk (the YAML, the
 * secrets file, the usage store's SQLite files holding the config history).
 */
import { readFile, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakes, providersYaml, startFakes, type FakeUpstream, type Fakes } from '@mana/llm-testkit';
import { aliasesYaml, chatOnce, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ADMIN_KEY = 'admin-key-e2e-secrets-2c7e';
const KEY_DASH = 'sk-literal-dash-e2e-41aa';
const KEY_UNDERSCORE = 'sk-literal-underscore-e2e-93bd';
const LEGACY_KEY = 'sk-legacy-file-e2e-70fe';
const BEARER = 'Bearer sk-live-header-e2e-5e0c';
const X_API_KEY = 'sk-x-api-key-e2e-d13f';
const CUSTOM_TOKEN = 'tok-custom-e2e-88c1';

let fakes: Fakes<'one' | 'two'>;
let gw: GatewayProcess;

beforeAll(async () => {
  fakes = await startFakes({ one: 'openai', two: 'openai' });
  const config =
    'providers:\n' +
    providersYaml({ ok: fakes.one }) +
    // As an earlier gateway wrote a_c's literal key: under the name a-c's key would get today.
    `  a_c: { type: openai, base_url: "${fakes.two.baseUrl}", api_key: "\${MANA_LLM_SECRET_A_C_API_KEY}" }\n` +
    aliasesYaml({ 'mana/a-c-legacy': ['a_c/m'] }, ['ok/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, E2E_BEARER_TOKEN: 'sk-env-bearer-e2e-0b19' } });
});

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
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
const secretsFile = (): Promise<string> => readFile(join(dirname(gw.configPath), 'aliases.secrets.env'), 'utf8');

/** Every byte of the usage store (database, WAL and shared-memory files): where the config history lives. */
async function storeBytes(): Promise<string> {
  const dir = join(dirname(gw.configPath), 'data');
  const files = await readdir(dir);
  const texts = await Promise.all(files.map((name) => readFile(join(dir, name), 'latin1')));
  return texts.join('\n');
}

/** The authorization header upstream `fake` saw on the last chat call to `alias`. */
async function keySeenUpstream(fake: FakeUpstream, alias: string): Promise<string | undefined> {
  fake.reset();
  expect((await chatOnce(gw.url, alias)).status).toBe(200);
  return fake.requests.at(-1)?.headers.authorization as string | undefined;
}

describe('secret variable names are unique per provider', () => {
  it('a-b and a_b each keep their own literal key: writing one does not replace the other', async () => {
    expect((await admin('/admin/providers/a-b', { method: 'PUT', body: { type: 'openai', base_url: fakes.one.baseUrl, api_key: KEY_DASH } })).status).toBe(201);
    const underscore = await admin('/admin/providers/a_b', { method: 'PUT', body: { type: 'openai', base_url: fakes.two.baseUrl, api_key: KEY_UNDERSCORE } });
    expect(underscore.status).toBe(201);
    const dash = await admin('/admin/providers/a-b');
    expect(dash.body.api_key_env).toBe('MANA_LLM_SECRET_A_B_API_KEY');
    expect(underscore.body.api_key_env).toBe('MANA_LLM_SECRET_A_B_API_KEY_2');

    expect((await admin('/admin/aliases/mana/a-b', { method: 'PUT', body: { chain: ['a-b/m'] } })).status).toBe(201);
    expect((await admin('/admin/aliases/mana/a_b', { method: 'PUT', body: { chain: ['a_b/m'] } })).status).toBe(201);
    expect(await keySeenUpstream(fakes.one, 'mana/a-b')).toBe(`Bearer ${KEY_DASH}`);
    expect(await keySeenUpstream(fakes.two, 'mana/a_b')).toBe(`Bearer ${KEY_UNDERSCORE}`);

    // Rewriting a_b's key reuses its own name and leaves a-b's alone.
    expect((await admin('/admin/providers/a_b', { method: 'PATCH', body: { api_key: `${KEY_UNDERSCORE}-2` } })).body.api_key_env).toBe('MANA_LLM_SECRET_A_B_API_KEY_2');
    expect(await keySeenUpstream(fakes.one, 'mana/a-b')).toBe(`Bearer ${KEY_DASH}`);
    expect(await keySeenUpstream(fakes.two, 'mana/a_b')).toBe(`Bearer ${KEY_UNDERSCORE}-2`);
  });

  it('a file an earlier gateway wrote stays readable: a new provider whose name maps to a variable already in use gets another', async () => {
    const before = await yaml();
    expect((await admin('/admin/providers/a_c', { method: 'PATCH', body: { api_key: LEGACY_KEY } })).body.api_key_env).toBe('MANA_LLM_SECRET_A_C_API_KEY');
    const created = await admin('/admin/providers/a-c', { method: 'PUT', body: { type: 'openai', base_url: fakes.one.baseUrl, api_key: KEY_DASH } });
    expect(created.status).toBe(201);
    expect(created.body.api_key_env).toBe('MANA_LLM_SECRET_A_C_API_KEY_2');
    expect(await yaml()).toContain(before.split('\n').find((line) => line.startsWith('  a_c:')));
    expect(await keySeenUpstream(fakes.two, 'mana/a-c-legacy')).toBe(`Bearer ${LEGACY_KEY}`);
  });
});

describe('credential headers are stored like api_key', () => {
  it('Authorization, x-api-key and a header listed in secret_headers go to the secrets file; the YAML, the history and the store never hold them; the upstream receives them', async () => {
    const put = await admin('/admin/providers/hdr', {
      method: 'PUT',
      body: {
        type: 'openai',
        base_url: fakes.one.baseUrl,
        headers: { Authorization: BEARER, 'x-api-key': X_API_KEY, 'X-Custom-Token': CUSTOM_TOKEN, 'X-Title': 'Mana gateway' },
        secret_headers: ['X-Custom-Token'],
      },
    });
    expect(put.status).toBe(201);
    expect(put.body.headers).toEqual({
      Authorization: '${MANA_LLM_SECRET_HDR_HEADER_AUTHORIZATION}',
      'x-api-key': '${MANA_LLM_SECRET_HDR_HEADER_X_API_KEY}',
      'X-Custom-Token': '${MANA_LLM_SECRET_HDR_HEADER_X_CUSTOM_TOKEN}',
      'X-Title': '<redacted>',
    });
    const text = await yaml();
    expect(text).toContain('Authorization: ${MANA_LLM_SECRET_HDR_HEADER_AUTHORIZATION}');
    expect(text).toContain('X-Title: Mana gateway'); // not a credential: stays readable in the file
    const secrets = await secretsFile();
    expect(secrets).toContain(`MANA_LLM_SECRET_HDR_HEADER_AUTHORIZATION=${BEARER}\n`);
    expect(secrets).toContain(`MANA_LLM_SECRET_HDR_HEADER_X_API_KEY=${X_API_KEY}\n`);
    expect(secrets).toContain(`MANA_LLM_SECRET_HDR_HEADER_X_CUSTOM_TOKEN=${CUSTOM_TOKEN}\n`);

    expect((await admin('/admin/aliases/mana/hdr', { method: 'PUT', body: { chain: ['hdr/m'] } })).status).toBe(201);
    fakes.one.reset();
    expect((await chatOnce(gw.url, 'mana/hdr')).status).toBe(200);
    const seen = fakes.one.requests.at(-1)!.headers;
    expect(seen).toMatchObject({ authorization: BEARER, 'x-api-key': X_API_KEY, 'x-custom-token': CUSTOM_TOKEN, 'x-title': 'Mana gateway' });

    // A PATCH of one header keeps the others' references.
    expect((await admin('/admin/providers/hdr', { method: 'PATCH', body: { headers: { Authorization: `${BEARER}-2` } } })).status).toBe(200);
    expect(await secretsFile()).toContain(`MANA_LLM_SECRET_HDR_HEADER_AUTHORIZATION=${BEARER}-2\n`);
    fakes.one.reset();
    expect((await chatOnce(gw.url, 'mana/hdr')).status).toBe(200);
    expect(fakes.one.requests.at(-1)!.headers).toMatchObject({ authorization: `${BEARER}-2`, 'x-api-key': X_API_KEY });

    const history = await admin('/admin/config/history?limit=100');
    const versions = await Promise.all(history.body.data.map((v: Json) => admin(`/admin/config/history/${v.version}`)));
    const everywhere = [await yaml(), JSON.stringify(history.body), JSON.stringify(versions.map((v) => v.body)), await storeBytes(), gw.output()].join('\n');
    for (const token of [BEARER.slice('Bearer '.length), X_API_KEY, CUSTOM_TOKEN]) expect(everywhere).not.toContain(token);
  });

  it('"Bearer ${VAR}" is a reference: written as sent, resolved from the environment', async () => {
    const put = await admin('/admin/providers/hdr-env', { method: 'PUT', body: { type: 'openai', base_url: fakes.one.baseUrl, headers: { Authorization: 'Bearer ${E2E_BEARER_TOKEN}' } } });
    expect(put.status).toBe(201);
    expect(await yaml()).toContain('Authorization: Bearer ${E2E_BEARER_TOKEN}');
    expect((await admin('/admin/aliases/mana/hdr-env', { method: 'PUT', body: { chain: ['hdr-env/m'] } })).status).toBe(201);
    expect(await keySeenUpstream(fakes.one, 'mana/hdr-env')).toBe('Bearer sk-env-bearer-e2e-0b19');
  });
});
