/**
 * LiteLLM-compatible model management end to end: the built gateway, real
 * HTTP, the config file read back from disk.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, chatOnce, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const MASTER_KEY = 'master-key-litellm-e2e-0b6d';
const DEPLOYMENT_KEY = 'sk-deployment-literal-e2e-77ab';

let live: FakeUpstream;
let downBase: string;
let gw: GatewayProcess;

beforeAll(async () => {
  live = await startFakeOpenAI({ name: 'live' });
  downBase = `http://127.0.0.1:${await refusingPort()}/v1`;
  const config = `providers:\n  ok: { type: openai, base_url: "${live.baseUrl}", api_key_required: false }\n` + aliasesYaml({}, ['ok/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: MASTER_KEY } });
});

afterAll(async () => {
  await gw?.stop();
  await live?.close();
});

async function call(method: string, path: string, body?: unknown, auth: 'bearer' | 'x-api-key' | 'none' = 'bearer'): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth === 'bearer') headers.authorization = `Bearer ${MASTER_KEY}`;
  if (auth === 'x-api-key') headers['x-api-key'] = MASTER_KEY;
  // A string is sent as the body's text.
  const text = body === undefined || typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(`${gw.url}${path}`, { method, headers, body: text });
  return { status: res.status, body: await res.json() };
}

const chat = (model: string): Promise<Response> => chatOnce(gw.url, model);

const file = (): Promise<string> => readFile(gw.configPath, 'utf8');

/** JSON text of `{"a": {"a": … {}}}`, 5,000 objects deep (sent as is: JSON.stringify itself would overflow). */
const DEEP = `${'{"a": '.repeat(5000)}{}${'}'.repeat(5000)}`;

const deploymentsOf = (info: Json, name: string): Json[] => info.data.filter((d: Json) => d.model_name === name);

describe('LiteLLM /model/new', () => {
  it('twice with one model_name and two api_bases: two deployments of a weighted alias; chat succeeds with one api_base down', async () => {
    const first = await call('POST', '/model/new', { model_name: 'ha', litellm_params: { model: 'openai/m-live', api_base: live.baseUrl } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ model_name: 'ha', litellm_params: { model: 'openai/m-live', api_base: live.baseUrl } });
    const second = await call('POST', '/model/new', { model_name: 'ha', litellm_params: { model: 'openai/m-down', api_base: downBase, weight: 3 } }, 'x-api-key');
    expect(second.status).toBe(200);
    expect(second.body.model_id).not.toBe(first.body.model_id);

    const info = await call('GET', '/model/info');
    const ha = deploymentsOf(info.body, 'ha');
    expect(ha).toHaveLength(2);
    expect(ha.map((d: Json) => d.litellm_params.api_base).sort()).toEqual([live.baseUrl, downBase].sort());
    expect(JSON.stringify(info.body)).not.toContain('api_key');
    expect((await call('GET', '/v1/model/info')).body).toEqual(info.body);

    // The live base URL is the existing provider `ok`; the down one got a new, readable provider.
    const text = await file();
    expect(text).toMatch(/ {2}ha:\n {4}strategy: weighted\n {4}chain:\n {6}- ok\/m-live\n {6}- target: openai-127-0-0-1-\d+\/m-down\n {8}weight: 3\n/);

    for (let i = 0; i < 4; i++) {
      const res = await chat('ha');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-mana-llm-resolved')).toBe('ok/m-live');
    }
  });

  it('the same deployment twice is idempotent: same id, file unchanged', async () => {
    const before = await file();
    const again = await call('POST', '/model/new', { model_name: 'ha', litellm_params: { model: 'openai/m-live', api_base: live.baseUrl } });
    expect(again.status).toBe(200);
    expect(await file()).toBe(before);
    expect(deploymentsOf((await call('GET', '/model/info')).body, 'ha')).toHaveLength(2);
  });

  it('unknown litellm_params are accepted and listed as warnings; a literal api_key goes to the secrets file', async () => {
    const res = await call('POST', '/model/new', {
      model_name: 'gpt-4o',
      litellm_params: { model: 'openai/gpt-4o', api_base: `${live.url}/v2`, api_key: DEPLOYMENT_KEY, api_version: '2024-01-01', rpm: 10 },
      model_info: { id: 'my-own-id' },
    });
    expect(res.status).toBe(200);
    expect(res.body.warnings).toEqual([
      'litellm_params.api_version is not supported and was ignored',
      'litellm_params.rpm is not supported and was ignored',
      'model_info.id was ignored: deployment ids are derived from model_name and model',
    ]);
    expect(await file()).not.toContain(DEPLOYMENT_KEY);
    expect(JSON.stringify((await call('GET', '/model/info')).body)).not.toContain(DEPLOYMENT_KEY);
    expect(gw.output()).not.toContain(DEPLOYMENT_KEY);
  });

  it('/model_group/info has one entry per alias', async () => {
    const groups = await call('GET', '/model_group/info');
    expect(groups.status).toBe(200);
    const ha = groups.body.data.find((g: Json) => g.model_group === 'ha');
    expect(ha).toMatchObject({ mode: 'chat', mana_strategy: 'weighted' });
    expect(ha.mana_deployments).toHaveLength(2);
    expect(groups.body.data.filter((g: Json) => g.model_group === 'mana/fast-text')).toHaveLength(1);
  });
});

describe('LiteLLM update and delete', () => {
  it('PATCH /model/{id}/update changes the weight in the file', async () => {
    const down = deploymentsOf((await call('GET', '/model/info')).body, 'ha').find((d: Json) => d.litellm_params.api_base === downBase);
    const res = await call('PATCH', `/model/${down.model_info.id}/update`, { litellm_params: { weight: 5 } });
    expect(res.status).toBe(200);
    expect(res.body.model_info.id).toBe(down.model_info.id);
    expect(await file()).toContain('        weight: 5\n');
  });

  it('POST /model/update with model_info.id merges; an unknown id is 404 in LiteLLM shape', async () => {
    const live1 = deploymentsOf((await call('GET', '/model/info')).body, 'ha').find((d: Json) => d.litellm_params.api_base === live.baseUrl);
    const ok = await call('POST', '/model/update', { model_info: { id: live1.model_info.id }, litellm_params: { weight: 2 } });
    expect(ok.status).toBe(200);
    expect(ok.body.litellm_params.weight).toBe(2);
    const missing = await call('POST', '/model/update', { model_info: { id: 'nope' }, litellm_params: { weight: 2 } });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { message: expect.any(String), type: 'target_not_found', param: 'id', code: '404' } });
  });

  it('/model/delete removes one target (the alias keeps one, without strategy), then the alias with its last', async () => {
    const [a, b] = deploymentsOf((await call('GET', '/model/info')).body, 'ha');
    expect((await call('POST', '/model/delete', { id: b.model_info.id })).status).toBe(200);
    expect(await file()).toMatch(/ {2}ha:\n {4}chain:\n {6}- ok\/m-live\n/);
    expect((await call('POST', '/model/delete', { id: a.model_info.id })).status).toBe(200);
    expect(await file()).not.toMatch(/^ {2}ha:/m);
    expect((await chat('ha')).status).toBe(404);
  });

  it("removing a required alias's last deployment is 409 alias_required", async () => {
    const fast = deploymentsOf((await call('GET', '/model/info')).body, 'mana/fast-text');
    expect(fast).toHaveLength(1);
    const res = await call('POST', '/model/delete', { id: fast[0].model_info.id });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ type: 'alias_required', code: '409' });
  });
});

describe('LiteLLM auth and bad input', () => {
  it('no key → 401, wrong key → 403, both in LiteLLM shape', async () => {
    const none = await call('GET', '/model/info', undefined, 'none');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: { message: expect.stringContaining('x-api-key'), type: 'missing_admin_key', param: null, code: '401' } });
    const res = await fetch(`${gw.url}/model/new`, { method: 'POST', headers: { 'x-api-key': 'wrong' }, body: '{}' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).error).toMatchObject({ type: 'invalid_admin_key', code: '403' });
  });

  it.each([
    ['no model_name', 400, 'invalid_request', { litellm_params: { model: 'openai/x' } }],
    ['a model without a provider prefix', 400, 'invalid_request', { model_name: 'x', litellm_params: { model: 'gpt-4o' } }],
    ['an unsupported prefix', 400, 'invalid_request', { model_name: 'x', litellm_params: { model: 'azure/gpt-4o' } }],
    // Names of Object.prototype's members are unknown prefixes too, not a provider spec read off the prototype.
    ['the prefix constructor', 400, 'invalid_request', { model_name: 'x', litellm_params: { model: 'constructor/x' } }],
    ['the prefix toString', 400, 'invalid_request', { model_name: 'x', litellm_params: { model: 'toString/x' } }],
    ['the prefix __proto__', 400, 'invalid_request', { model_name: 'x', litellm_params: { model: '__proto__/x' } }],
    ['a name clashing with a provider', 409, 'name_conflict', { model_name: 'ok/x', litellm_params: { model: 'openai/x', api_base: 'http://127.0.0.1:9/v1' } }],
    ['an invalid api_base', 422, 'invalid_config', { model_name: 'x', litellm_params: { model: 'openai/x', api_base: 'not a url' } }],
    ['JSON nested 5,000 levels deep', 400, 'invalid_request', `{"model_name": "x", "litellm_params": {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1", "extra": ${DEEP}}}`],
  ] as [string, number, string, unknown][])('%s → %i %s, nothing written', async (_what, status, type, body) => {
    const before = await file();
    const res = await call('POST', '/model/new', body);
    expect(res.status).toBe(status);
    expect(res.body.error).toMatchObject({ type, code: String(status) });
    expect(await file()).toBe(before);
  });
});
