/**
 * The admin resource API end to end: the built gateway process, real HTTP,
 * and the config file read back from disk after each write.
 */
import { spawnSync } from 'node:child_process';
import { chmod, readFile, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, secretsPathFor } from '@mana/llm-router';
import { closeFakes, refusingPort, startFakes, type Fakes } from '@mana/llm-testkit';
import { aliasesYaml, chatOnce, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ADMIN_KEY = 'admin-key-for-e2e-7d1f';
const LITERAL_KEY = 'sk-literal-e2e-secret-93kq';

let fakes: Fakes<'one' | 'two'>;
let gw: GatewayProcess;
let original: string;

beforeAll(async () => {
  fakes = await startFakes({ one: 'openai', two: 'openai' });
  const dead = await refusingPort();
  original =
    '# Team config: comments must survive admin writes.\n' +
    'providers:\n' +
    `  dead: { type: openai, base_url: "http://127.0.0.1:${dead}/v1", api_key_required: false }   # nothing listens here\n` +
    `  ok:   { type: openai, base_url: "${fakes.one.baseUrl}", api_key_required: false }\n` +
    `  ok2:  { type: openai, base_url: "${fakes.two.baseUrl}", api_key_required: false }\n` +
    aliasesYaml({}, ['ok/m1']);
  gw = await spawnGateway({ config: original, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, TEAM_KEY: 'sk-from-env-4411' } });
});

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
});

interface Call {
  status: number;
  headers: Headers;
  body: Json;
}

async function admin(path: string, init: { method?: string; body?: unknown; raw?: string; ifMatch?: string } = {}): Promise<Call> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
  if (init.ifMatch !== undefined) headers['if-match'] = init.ifMatch;
  const res = await fetch(`${gw.url}${path}`, {
    method: init.method ?? 'GET',
    headers,
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

const chat = (model: string): Promise<Response> => chatOnce(gw.url, model);

const file = (): Promise<string> => readFile(gw.configPath, 'utf8');

describe('aliases', () => {
  it('PUT creates an alias with targets [dead, ok] and failover: the file gains exactly that block; a chat answers from ok after 2 attempts', async () => {
    const put = await admin('/admin/aliases/mana/team', { method: 'PUT', body: { description: 'Team alias', strategy: 'failover', targets: ['dead/m', 'ok/m'] } });
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ name: 'mana/team', strategy: 'failover', chain: [{ target: 'dead/m' }, { target: 'ok/m' }], required: false });
    expect(put.body.chain[0].id).toMatch(/^[0-9a-f]{24}$/);
    expect(put.headers.get('etag')).toBe(`"${put.body.version}"`);
    expect(await file()).toBe(`${original}  mana/team:\n    description: Team alias\n    strategy: failover\n    chain:\n      - dead/m\n      - ok/m\n`);

    const res = await chat('mana/team');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('ok/m');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
  });

  it('PATCH to round_robin changes one line; 4 requests over two live targets give 2 each', async () => {
    expect((await admin('/admin/aliases/mana/rr', { method: 'PUT', body: { chain: ['ok/a', 'ok2/b'] } })).status).toBe(201);
    const before = await file();
    const patch = await admin('/admin/aliases/mana/rr', { method: 'PATCH', body: { strategy: 'round_robin' } });
    expect(patch.status).toBe(200);
    expect(patch.body.strategy).toBe('round_robin');
    expect(await file()).toBe(before.replace('  mana/rr:\n    chain:\n', '  mana/rr:\n    strategy: round_robin\n    chain:\n'));

    const answered: string[] = [];
    for (let i = 0; i < 4; i++) answered.push((await chat('mana/rr')).headers.get('x-mana-llm-resolved') ?? '');
    expect(answered.filter((t) => t === 'ok/a')).toHaveLength(2);
    expect(answered.filter((t) => t === 'ok2/b')).toHaveLength(2);
  });

  it('removing a target leaves a one-target alias with no strategy, in the file and in GET', async () => {
    const patch = await admin('/admin/aliases/mana/rr', { method: 'PATCH', body: { chain: ['ok2/b'] } });
    expect(patch.status).toBe(200);
    expect(patch.body.strategy).toBeNull();
    expect(await file()).toMatch(/ {2}mana\/rr:\n {4}chain:\n {6}- ok2\/b\n$/);
    const get = await admin('/admin/aliases/mana/rr');
    expect(get.body.chain.map((t: Json) => t.target)).toEqual(['ok2/b']);
    expect(get.headers.get('etag')).toBe(patch.headers.get('etag'));
  });

  it('the target ids are stable: the same after a reload', async () => {
    const before = (await admin('/admin/aliases/mana/team')).body.chain.map((t: Json) => t.id);
    expect((await fetch(`${gw.url}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } })).status).toBe(200);
    expect((await admin('/admin/aliases/mana/team')).body.chain.map((t: Json) => t.id)).toEqual(before);
  });

  it('guards: 409 provider_in_use, alias_required, name_conflict, each listing what holds it; nothing written', async () => {
    const before = await file();
    const inUse = await admin('/admin/providers/ok', { method: 'DELETE' });
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.code).toBe('provider_in_use');
    expect(inUse.body.error.held_by).toEqual(expect.arrayContaining(['mana/fast-text', 'mana/team']));
    const required = await admin('/admin/aliases/mana/fast-text', { method: 'DELETE' });
    expect(required.status).toBe(409);
    expect(required.body.error).toMatchObject({ code: 'alias_required', held_by: ['@mana/llm-aliases'] });
    const clash = await admin('/admin/aliases/ok/x', { method: 'PUT', body: { chain: ['ok/m'] } });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toMatchObject({ code: 'name_conflict', held_by: ['provider ok'] });
    expect(await file()).toBe(before);
  });

  it('DELETE removes an alias and its lines', async () => {
    const before = await file();
    const del = await admin('/admin/aliases/mana/rr', { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await file()).toBe(before.replace(/ {2}mana\/rr:\n {4}chain:\n {6}- ok2\/b\n$/, ''));
    expect((await admin('/admin/aliases/mana/rr')).status).toBe(404);
    expect((await chat('mana/rr')).status).toBe(404);
  });

  it('every chain-entry key of the config (price) is accepted and survives a PATCH', async () => {
    const put = await admin('/admin/aliases/mana/priced', { method: 'PUT', body: { chain: [{ target: 'ok/m', price: { input: 1.5, output: 2 } }] } });
    expect(put.status).toBe(201);
    expect(put.body.chain[0]).toMatchObject({ target: 'ok/m', price: { input: 1.5, output: 2 } });
    const patch = await admin('/admin/aliases/mana/priced', { method: 'PATCH', body: { description: 'priced' } });
    expect(patch.status).toBe(200);
    expect(await file()).toMatch(/ {2}mana\/priced:\n {4}description: priced\n {4}chain:\n {6}- target: ok\/m\n {8}price:\n {10}input: 1.5\n {10}output: 2\n$/);
    expect((await admin('/admin/aliases/mana/priced', { method: 'DELETE' })).status).toBe(200);
  });

  it('a name outside mana/ (LiteLLM style) is created and callable as model', async () => {
    expect((await admin('/admin/aliases/gpt-4o', { method: 'PUT', body: { target: 'ok/gpt' } })).status).toBe(201);
    const res = await chat('gpt-4o');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('ok/gpt');
  });
});

describe('versions', () => {
  it('If-Match with a stale ETag is 412 version_conflict; GET /admin/config gives text and version', async () => {
    const config = await admin('/admin/config');
    expect(config.status).toBe(200);
    expect(config.body.text).toBe(await file());
    expect(config.body.source).toBe(gw.configPath);
    const stale = '"0000000000000000"';
    const put = await admin('/admin/aliases/mana/x', { method: 'PUT', ifMatch: stale, body: { chain: ['ok/m'] } });
    expect(put.status).toBe(412);
    expect(put.body.error.code).toBe('version_conflict');
    const ok = await admin('/admin/aliases/mana/x', { method: 'PUT', ifMatch: config.headers.get('etag')!, body: { chain: ['ok/m'] } });
    expect(ok.status).toBe(201);
  });

  it('20 concurrent writes with the same If-Match: one applies, 19 get 412; the file is the applied version and parses', async () => {
    const etag = (await admin('/admin/config')).headers.get('etag')!;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => admin('/admin/aliases/mana/x', { method: 'PUT', ifMatch: etag, body: { description: `writer ${i}`, chain: ['ok/m'] } })),
    );
    const applied = results.filter((r) => r.status === 200);
    expect(applied).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(19);
    const text = await file();
    expect((await admin('/admin/config')).headers.get('etag')).toBe(applied[0]!.headers.get('etag'));
    expect(parseConfig(text).aliases.get('mana/x')?.description).toBe(applied[0]!.body.description);
  });

  it('20 concurrent writes without If-Match all apply, one after another; the last applied is the file', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => admin('/admin/aliases/mana/x', { method: 'PUT', body: { description: `free ${i}`, chain: ['ok/m'] } })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const etag = (await admin('/admin/config')).headers.get('etag');
    const last = results.find((r) => r.headers.get('etag') === etag);
    expect(last).toBeDefined();
    expect(parseConfig(await file()).aliases.get('mana/x')?.description).toBe(last!.body.description);
  });
});

/** `{"a": {"a": … {}}}`, 5,000 objects deep. */
const DEEP = `${'{"a": '.repeat(5000)}{}${'}'.repeat(5000)}`;

describe('bad input: a 4xx with a stable code, never a 5xx, never a write', () => {
  it.each([
    ['malformed JSON', '/admin/aliases/mana/y', { method: 'PUT', raw: '{"chain": [' }, 400, 'invalid_json'],
    ['an unknown field', '/admin/aliases/mana/y', { method: 'PUT', body: { chian: ['ok/m'] } }, 400, 'unknown_field'],
    ['an unknown chain entry field', '/admin/aliases/mana/y', { method: 'PUT', body: { chain: [{ target: 'ok/m', wieght: 2 }] } }, 400, 'unknown_field'],
    ['an unknown provider', '/admin/aliases/mana/y', { method: 'PUT', body: { chain: ['nope/m'] } }, 422, 'invalid_config'],
    ['a negative weight', '/admin/aliases/mana/y', { method: 'PUT', body: { strategy: 'weighted', chain: [{ target: 'ok/a', weight: -1 }, 'ok/b'] } }, 422, 'invalid_config'],
    ['a weight that is not a number', '/admin/aliases/mana/y', { method: 'PUT', body: { strategy: 'weighted', chain: [{ target: 'ok/a', weight: 'x' }, 'ok/b'] } }, 422, 'invalid_config'],
    ['1,000 targets', '/admin/aliases/mana/y', { method: 'PUT', body: { strategy: 'round_robin', chain: Array.from({ length: 1000 }, (_, i) => `ok/m${i}`) } }, 400, 'too_many_targets'],
    ['a 10 MB body', '/admin/aliases/mana/y', { method: 'PUT', raw: JSON.stringify({ description: 'x'.repeat(10 * 1024 * 1024), chain: ['ok/m'] }) }, 413, 'request_too_large'],
    ['a .. segment', '/admin/aliases/mana/../etc', { method: 'PUT', body: { chain: ['ok/m'] } }, 400, 'invalid_name'],
    ['an encoded slash', '/admin/aliases/mana%2Fy', { method: 'PUT', body: { chain: ['ok/m'] } }, 400, 'invalid_name'],
    ['a control character', '/admin/aliases/mana/y%01', { method: 'PUT', body: { chain: ['ok/m'] } }, 400, 'invalid_name'],
    ['a 10 KB name', `/admin/aliases/mana/${'y'.repeat(10 * 1024)}`, { method: 'PUT', body: { chain: ['ok/m'] } }, 400, 'invalid_name'],
    ['an encoded slash in a provider name', '/admin/providers/a%2Fb', { method: 'DELETE' }, 400, 'invalid_name'],
    ['an unknown provider field', '/admin/providers/extra', { method: 'PUT', body: { type: 'openai', base_url: 'http://127.0.0.1:9/v1', apikey: 'x' } }, 400, 'unknown_field'],
    // Refused before parsing, as /v1/chat/completions does: the YAML edit and the merge patch never see such a value.
    ['JSON nested 5,000 levels deep (PUT alias)', '/admin/aliases/mana/y', { method: 'PUT', raw: `{"chain": ["ok/m"], "settings": ${DEEP}}` }, 400, 'invalid_request'],
    ['JSON nested 5,000 levels deep (PATCH alias)', '/admin/aliases/mana/fast-text', { method: 'PATCH', raw: `{"settings": ${DEEP}}` }, 400, 'invalid_request'],
    ['JSON nested 5,000 levels deep (PUT provider)', '/admin/providers/extra', { method: 'PUT', raw: `{"type": "openai", "base_url": "http://127.0.0.1:9/v1", "options": ${DEEP}}` }, 400, 'invalid_request'],
    ['JSON nested 5,000 levels deep (PATCH provider)', '/admin/providers/ok', { method: 'PATCH', raw: `{"options": ${DEEP}}` }, 400, 'invalid_request'],
  ])('%s', async (_what, path, init, status, code) => {
    const before = await file();
    // fetch normalises `..` away; send it as written
    const res = path.includes('..') ? await rawRequest(path, init as { method: string; body: unknown }) : await admin(path, init as Parameters<typeof admin>[1]);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    if ((init as { raw?: string }).raw?.includes(DEEP) === true) expect(res.body.error.message).toBe('The request body nests deeper than 64 levels.');
    expect(await file()).toBe(before);
  });

  it('aliases and providers refuse a PATCH that is not an object, and a body naming another resource, with the same answer', async () => {
    const before = await file();
    for (const path of ['/admin/aliases/mana/fast-text', '/admin/providers/ok']) {
      for (const raw of ['[1]', '"x"', 'null']) {
        const res = await admin(path, { method: 'PATCH', raw });
        expect(res.status, `${path} ${raw}`).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_request', message: 'A PATCH body is a JSON merge patch: a JSON object.' });
      }
    }
    const alias = await admin('/admin/aliases/mana/y', { method: 'PUT', body: { name: 'mana/z', chain: ['ok/m'] } });
    const provider = await admin('/admin/providers/extra', { method: 'PUT', body: { name: 'other', type: 'openai', base_url: 'http://127.0.0.1:9/v1' } });
    expect(alias.status).toBe(400);
    expect(alias.body.error).toMatchObject({ code: 'invalid_request', param: 'name', message: 'The body names "mana/z", the path "mana/y".' });
    expect(provider.status).toBe(400);
    expect(provider.body.error).toMatchObject({ code: 'invalid_request', param: 'name', message: 'The body names "other", the path "extra".' });
    expect(await file()).toBe(before);
  });

  it('the invalid_config answer carries the loader message (file, line, alias)', async () => {
    const res = await admin('/admin/aliases/mana/y', { method: 'PUT', body: { chain: ['nope/m'] } });
    expect(res.body.error.message).toMatch(new RegExp(`^invalid config at ${gw.configPath} line \\d+ \\(alias mana/y\\): unknown provider "nope"`));
  });
});

async function rawRequest(path: string, init: { method: string; body: unknown }): Promise<Call> {
  const { request } = await import('node:http');
  const body = JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    // `path` as an option: a URL string would be normalised (`..` resolved) before sending.
    const req = request({ host: '127.0.0.1', port: gw.port, path, method: init.method, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: new Headers(), body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('providers and secrets', () => {
  it('a literal api_key goes to a 0600 secrets file, the YAML refers to it; GET says only that it is set; the upstream receives it', async () => {
    const put = await admin('/admin/providers/team', { method: 'PUT', body: { type: 'openai', base_url: fakes.one.baseUrl, api_key: LITERAL_KEY } });
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({ name: 'team', api_key_set: true, api_key_env: 'MANA_LLM_SECRET_TEAM_API_KEY' });
    const text = await file();
    expect(text).not.toContain(LITERAL_KEY);
    expect(text).toContain('api_key: ${MANA_LLM_SECRET_TEAM_API_KEY}');
    const secretsPath = join(dirname(gw.configPath), 'aliases.secrets.env');
    expect((await stat(secretsPath)).mode & 0o777).toBe(0o600);
    expect(await readFile(secretsPath, 'utf8')).toContain(`MANA_LLM_SECRET_TEAM_API_KEY=${LITERAL_KEY}\n`);

    expect((await admin('/admin/aliases/mana/keyed', { method: 'PUT', body: { chain: ['team/k'] } })).status).toBe(201);
    fakes.one.reset();
    expect((await chat('mana/keyed')).status).toBe(200);
    expect(fakes.one.requests[0]?.headers.authorization).toBe(`Bearer ${LITERAL_KEY}`);
  });

  it('references are stored as ${NAME}: ${TEAM_KEY} and LiteLLM os.environ/TEAM_KEY', async () => {
    const patch = await admin('/admin/providers/team', { method: 'PATCH', body: { api_key: 'os.environ/TEAM_KEY' } });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ api_key_set: true, api_key_env: 'TEAM_KEY' });
    expect(await file()).toContain('api_key: ${TEAM_KEY}');
  });

  it('no key appears in any response, the file or the logs; each write logged one line with the key fingerprint', async () => {
    const all = JSON.stringify([(await admin('/admin/providers')).body, (await admin('/admin/providers/team')).body, (await admin('/admin/config')).body]);
    expect(all).not.toContain(LITERAL_KEY);
    expect(all).not.toContain('sk-from-env-4411');
    expect(gw.output()).not.toContain(LITERAL_KEY);
    expect(gw.output()).not.toContain(ADMIN_KEY);
    const written = gw.logs.filter((l) => l.msg === 'config written');
    expect(written.length).toBeGreaterThan(5);
    expect(written[0]).toMatchObject({ route: 'PUT /admin/aliases/mana/team', change: 'alias mana/team created (2 targets)', admin_key: expect.stringMatching(/^k:[0-9a-f]{12}$/) });
    expect(written[0]!.old_version).not.toBe(written[0]!.new_version);
  });

  it('an unused provider can be deleted; its lines go', async () => {
    expect((await admin('/admin/aliases/mana/keyed', { method: 'DELETE' })).status).toBe(200);
    const del = await admin('/admin/providers/team', { method: 'DELETE' });
    expect(del.status).toBe(200);
    expect(await file()).not.toMatch(/^ {2}team:/m);
  });
});

describe('a read-only file', () => {
  it('is 409 config_read_only; the file and the running config stay as they were', async () => {
    const before = await file();
    await chmod(gw.configPath, 0o444);
    try {
      const put = await admin('/admin/aliases/mana/ro', { method: 'PUT', body: { chain: ['ok/m'] } });
      expect(put.status).toBe(409);
      expect(put.body.error.code).toBe('config_read_only');
      expect(await file()).toBe(before);
      expect((await chat('mana/ro')).status).toBe(404);
    } finally {
      await chmod(gw.configPath, 0o644);
    }
    expect((await readdir(dirname(gw.configPath))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('restart', () => {
  it('a restarted gateway on the same file serves the change', async () => {
    const child = gw.child;
    child.kill('SIGTERM');
    await gw.exited;
    const again = await spawnGateway({ config: 'unused: true\n', args: ['--config', gw.configPath], env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
    try {
      const res = await chatOnce(again.url, 'mana/team');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-mana-llm-resolved')).toBe('ok/m');
    } finally {
      await again.stop();
    }
  });

  it('a start removes the temporary files of a write killed before its rename (config and secrets), older than a minute', async () => {
    const folder = dirname(gw.configPath);
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    const configTemp = `.${basename(gw.configPath)}.${deadPid}.0a1b2c3d.tmp`;
    const secretsTemp = `.${basename(secretsPathFor(gw.configPath))}.${deadPid}.0a1b2c3d.tmp`;
    const recentTemp = `.${basename(gw.configPath)}.${deadPid}.4e5f6a7b.tmp`;
    const old = (Date.now() - 120_000) / 1000;
    for (const name of [configTemp, secretsTemp, recentTemp]) await writeFile(join(folder, name), 'TEAM_KEY=sk-half-written-9931\n');
    for (const name of [configTemp, secretsTemp]) await utimes(join(folder, name), old, old);
    const again = await spawnGateway({ config: 'unused: true\n', args: ['--config', gw.configPath], env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
    try {
      const left = await readdir(folder);
      expect(left).not.toContain(configTemp);
      expect(left).not.toContain(secretsTemp);
      expect(left).toContain(recentTemp);
      const line = again.logs.find((l) => l.msg === 'temporary files of an interrupted config write removed');
      expect(line?.files).toEqual(expect.arrayContaining([configTemp, secretsTemp]));
      expect(again.output()).not.toContain('sk-half-written-9931');
      expect((await chatOnce(again.url, 'mana/team')).status).toBe(200);
    } finally {
      await again.stop();
    }
  });
});
