/**
 * The service key admin API end to end: the built gateway process with its
 * embedded SQLite file, real HTTP, the database files read back as bytes,
 * a restart on the same data folder and a kill -9 in the middle of creates.
 * The tests run in order and build on each other's keys.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakes, providersYaml, startFakes, startTestPostgres, type Fakes } from '@mana/llm-testkit';
import pg from 'pg';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ADMIN_KEY = 'admin-key-e2e-keys-6f3a';
const STATIC_KEYS = 'sk-static-one-e2e-81aa,sk-static-two-e2e-22bb';
const KEY_FORMAT = /^mk-[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/;

let fakes: Fakes<'one'>;
let gw: GatewayProcess;
let dataDir: string;
let config: string;
/** Every secret the API showed: none may appear anywhere else. */
const shown: string[] = [];

const start = (): Promise<GatewayProcess> =>
  spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, MANA_LLM_API_KEYS: STATIC_KEYS, MANA_LLM_DATA_DIR: dataDir } });

beforeAll(async () => {
  fakes = await startFakes({ one: 'openai' });
  dataDir = mkdtempSync(join(tmpdir(), 'mana-keys-e2e-'));
  config = 'providers:\n' + providersYaml(fakes) + aliasesYaml({}, ['one/m1']);
  gw = await start();
});

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

interface Call {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

async function admin(path: string, init: { method?: string; body?: unknown; raw?: string; contentType?: string } = {}): Promise<Call> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}` };
  const body = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  if (body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  const res = await fetch(`${gw.url}${path}`, { method: init.method ?? 'GET', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text === '' ? undefined : JSON.parse(text) };
}

async function create(body: Record<string, unknown>): Promise<Json> {
  const res = await admin('/admin/keys', { method: 'POST', body });
  expect(res.status, res.text).toBe(201);
  shown.push(res.body.key);
  return res.body;
}

/** A chat completion with `key` as its API key (the body is kept for the caller to read). */
function chatWith(key: string, requestId?: string): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(requestId === undefined ? {} : { 'x-request-id': requestId }) },
    body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

function expectError(res: Call, status: number, code: string, param?: string | null): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(res.body.error.type).toEqual(expect.any(String));
  if (param !== undefined) expect(res.body.error.param).toBe(param);
}

describe('service keys', () => {
  let api: Json;

  it('lists the MANA_LLM_API_KEYS keys as read-only env-1 and env-2, without their keys', async () => {
    const list = await admin('/admin/keys');
    expect(list.status).toBe(200);
    expect(list.headers.get('cache-control')).toBe('no-store');
    expect(list.body.object).toBe('list');
    expect(list.body.data.map((k: Json) => [k.id, k.name, k.kind, k.read_only])).toEqual([
      ['env-1', 'env-1', 'static', true],
      ['env-2', 'env-2', 'static', true],
    ]);
    for (const key of STATIC_KEYS.split(',')) expect(list.text).not.toContain(key);
    expect((await admin('/admin/keys/env-2')).body).toMatchObject({ id: 'env-2', read_only: true });
  });

  it('POST creates a key and shows its secret once, in the mk-<id>_<secret> format', async () => {
    const res = await admin('/admin/keys', {
      method: 'POST',
      body: { name: 'mana-api', description: 'The <b>API</b> & its "workers"', aliases: ['mana/fast-text', 'one/m1'], priority: 'realtime', max_concurrency: 8 },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    api = res.body;
    shown.push(api.key);
    expect(api.key).toMatch(KEY_FORMAT);
    expect(api.key.slice(3, 15)).toBe(api.id);
    expect(api).toMatchObject({
      object: 'service_key',
      kind: 'service',
      read_only: false,
      name: 'mana-api',
      description: 'The <b>API</b> & its "workers"',
      last_used_at: null,
      expires_at: null,
      disabled: false,
      aliases: ['mana/fast-text', 'one/m1'],
      priority: 'realtime',
      max_concurrency: 8,
      previous_secret_valid_until: null,
    });
    expect(Date.parse(api.created_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('GET (one and all) never shows the secret', async () => {
    const one = await admin(`/admin/keys/${api.id}`);
    expect(one.status).toBe(200);
    expect(one.body.key).toBeUndefined();
    const { key: _key, ...withoutKey } = api;
    expect(one.body).toEqual(withoutKey);
    const list = await admin('/admin/keys');
    expect(list.body.data.map((k: Json) => k.name)).toEqual(['env-1', 'env-2', 'mana-api']);
    for (const text of [one.text, list.text]) {
      expect(text).not.toContain(api.key);
      expect(text).not.toContain(api.key.slice(16));
    }
  });

  it.each([
    [{}, 400, 'invalid_key_field', 'name'],
    [{ name: 'Mana API' }, 400, 'invalid_key_field', 'name'],
    [{ name: 'x'.repeat(65) }, 400, 'invalid_key_field', 'name'],
    [{ name: 'env-3' }, 400, 'invalid_key_field', 'name'],
    [{ name: 'ok', description: 'two\nlines' }, 400, 'invalid_key_field', 'description'],
    [{ name: 'ok', description: 'x'.repeat(10_240) }, 400, 'invalid_key_field', 'description'],
    [{ name: 'ok', expires_at: 'next week' }, 400, 'invalid_key_field', 'expires_at'],
    [{ name: 'ok', disabled: 'no' }, 400, 'invalid_key_field', 'disabled'],
    [{ name: 'ok', aliases: [] }, 400, 'invalid_key_field', 'aliases'],
    [{ name: 'ok', priority: 'urgent' }, 400, 'invalid_key_field', 'priority'],
    [{ name: 'ok', max_concurrency: 0 }, 400, 'invalid_key_field', 'max_concurrency'],
    [{ name: 'ok', max_concurrency: 10_001 }, 400, 'invalid_key_field', 'max_concurrency'],
    [{ name: 'ok', secret: 'mine' }, 400, 'unknown_field', 'secret'],
    [{ name: 'ok', aliases: ['mana/fast-text', 'mana/nope'] }, 400, 'unknown_alias', 'aliases'],
    [{ name: 'ok', aliases: ['nobody/m1'] }, 400, 'unknown_alias', 'aliases'],
    [{ name: 'mana-api' }, 409, 'key_name_taken', 'name'],
  ] as [Json, number, string, string][])('POST body #%# → %i %s on %s', async (body, status, code, param) => {
    const res = await admin('/admin/keys', { method: 'POST', body });
    expectError(res, status, code, param);
    if (code === 'unknown_alias') expect(res.body.error.message).toContain(body.aliases.at(-1));
    if (code === 'key_name_taken') expect(res.body.error.held_by).toEqual([api.id]);
  });

  it('bad bodies: not JSON, not an object, not JSON content — and nothing was created', async () => {
    expectError(await admin('/admin/keys', { method: 'POST', raw: '{"name":' }), 400, 'invalid_json');
    expectError(await admin('/admin/keys', { method: 'POST', body: ['mana-api'] }), 400, 'invalid_request');
    expectError(await admin('/admin/keys', { method: 'POST', raw: 'name=x', contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    expect((await admin('/admin/keys')).body.data).toHaveLength(3);
  });

  it('PATCH changes the fields it names, null clears one, and validates like POST', async () => {
    const patched = await admin(`/admin/keys/${api.id}`, { method: 'PATCH', body: { description: null, priority: 'background', expires_at: '2099-01-01T00:00:00Z' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ description: null, priority: 'background', expires_at: '2099-01-01T00:00:00.000Z', max_concurrency: 8, name: 'mana-api' });
    expect(patched.body.key).toBeUndefined();
    expectError(await admin(`/admin/keys/${api.id}`, { method: 'PATCH', body: { max_concurrency: -1 } }), 400, 'invalid_key_field', 'max_concurrency');
    expectError(await admin(`/admin/keys/${api.id}`, { method: 'PATCH', body: { aliases: ['mana/gone'] } }), 400, 'unknown_alias', 'aliases');
    expectError(await admin(`/admin/keys/${api.id}`, { method: 'PATCH', body: { id: 'x' } }), 400, 'unknown_field', 'id');
    expect((await admin(`/admin/keys/${api.id}`)).body.priority).toBe('background');
  });

  it('a rename onto a taken name is 409; a rename to a free one works', async () => {
    const other = await create({ name: 'importer' });
    expectError(await admin(`/admin/keys/${other.id}`, { method: 'PATCH', body: { name: 'mana-api' } }), 409, 'key_name_taken', 'name');
    expect((await admin(`/admin/keys/${other.id}`, { method: 'PATCH', body: { name: 'import-pipeline' } })).body.name).toBe('import-pipeline');
  });

  it('the env keys are read-only: PATCH, DELETE and rotate answer 409 key_read_only', async () => {
    expectError(await admin('/admin/keys/env-1', { method: 'PATCH', body: { name: 'x' } }), 409, 'key_read_only');
    expectError(await admin('/admin/keys/env-2', { method: 'DELETE' }), 409, 'key_read_only');
    expectError(await admin('/admin/keys/env-1/rotate', { method: 'POST' }), 409, 'key_read_only');
  });

  it('an unknown or malformed id is 404 key_not_found, whatever the method', async () => {
    for (const id of ['000000000000', 'env-3', 'env-0', 'not-an-id', 'x'.repeat(5_000), '%F0%9F%94%91', 'a%2Fb']) {
      expectError(await admin(`/admin/keys/${id}`), 404, 'key_not_found');
      expectError(await admin(`/admin/keys/${id}`, { method: 'PATCH', body: {} }), 404, 'key_not_found');
      expectError(await admin(`/admin/keys/${id}`, { method: 'DELETE' }), 404, 'key_not_found');
      expectError(await admin(`/admin/keys/${id}/rotate`, { method: 'POST' }), 404, 'key_not_found');
    }
    expectError(await admin(`/admin/keys/${api.id}`, { method: 'POST' }), 405, 'method_not_allowed');
  });

  it('rotate shows a new secret for the same id, once; the grace defaults to 24 h and may be 0', async () => {
    const before = Date.now();
    const rotated = await admin(`/admin/keys/${api.id}/rotate`, { method: 'POST' });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    shown.push(rotated.body.key);
    expect(rotated.body.key).toMatch(KEY_FORMAT);
    expect(rotated.body.key.slice(3, 15)).toBe(api.id);
    expect(rotated.body.key).not.toBe(api.key);
    const graceEnd = Date.parse(rotated.body.previous_secret_valid_until);
    expect(graceEnd).toBeGreaterThanOrEqual(before + 86_400_000 - 1_000);
    expect(graceEnd).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1_000);
    expect((await admin(`/admin/keys/${api.id}`)).body.key).toBeUndefined();

    const short = await admin(`/admin/keys/${api.id}/rotate`, { method: 'POST', body: { grace: '90m' } });
    shown.push(short.body.key);
    expect(Date.parse(short.body.previous_secret_valid_until) - Date.now()).toBeLessThanOrEqual(90 * 60_000 + 1_000);
    const seconds = await admin(`/admin/keys/${api.id}/rotate`, { method: 'POST', body: { grace: 60 } });
    shown.push(seconds.body.key);
    expect(Date.parse(seconds.body.previous_secret_valid_until) - Date.now()).toBeLessThanOrEqual(61_000);
    const none = await admin(`/admin/keys/${api.id}/rotate`, { method: 'POST', body: { grace: 0 } });
    shown.push(none.body.key);
    expect(none.body.previous_secret_valid_until).toBeNull();

    for (const grace of [-1, '24 parsecs', '31d', true, null]) {
      expectError(await admin(`/admin/keys/${api.id}/rotate`, { method: 'POST', body: { grace } }), 400, 'invalid_request', 'grace');
    }
    expectError(await admin(`/admin/keys/${api.id}/rotate`, { method: 'POST', body: { grace: '1h', name: 'x' } }), 400, 'unknown_field', 'name');
  });

  it('DELETE removes a key: then 404', async () => {
    const doomed = await create({ name: 'doomed' });
    const deleted = await admin(`/admin/keys/${doomed.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ object: 'service_key.deleted', id: doomed.id, deleted: true });
    expectError(await admin(`/admin/keys/${doomed.id}`), 404, 'key_not_found');
    expectError(await admin(`/admin/keys/${doomed.id}`, { method: 'DELETE' }), 404, 'key_not_found');
  });

  it('1,000 keys: each authenticates, and listing them all stays quick', async () => {
    const made: Json[] = [];
    for (let batch = 0; batch < 100; batch++) {
      made.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => create({ name: `svc-${batch * 10 + i}` })))));
    }
    const started = performance.now();
    const list = await admin('/admin/keys');
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(list.body.data.filter((k: Json) => k.name.startsWith('svc-'))).toHaveLength(1_000);
    for (const key of [made[0], made[499], made[999]]) expect((await chatWith(key.key)).status).toBe(200);
    // Gone again, one by one: the remaining tests see the keys they made.
    for (const key of made) expect((await admin(`/admin/keys/${key.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await chatWith(made[999].key)).status).toBe(401);
  }, 120_000);

  it('1,000 wrong keys: each is 401, answered as an unknown key, with one request log line each and no key in it', async () => {
    const logsBefore = gw.logs.length;
    const wrong = Array.from({ length: 1_000 }, (_, i) =>
      i % 4 === 0 ? `mk-${i.toString(16).padStart(12, '0')}_${'x'.repeat(43)}` : i % 4 === 1 ? `sk-guess-${i}` : i % 4 === 2 ? 'k'.repeat(4_000) : `mk-\u00e9${i}`,
    );
    for (let i = 0; i < wrong.length; i += 20) {
      const answers = await Promise.all(wrong.slice(i, i + 20).map((key, j) => chatWith(key, `brute-${i + j}`)));
      for (const res of answers) {
        expect(res.status).toBe(401);
        expect(((await res.json()) as Json).error.code).toBe('invalid_api_key');
      }
    }
    await gw.waitForLog((l) => l.req_id === 'brute-999');
    const lines = gw.logs.slice(logsBefore);
    const brute = lines.filter((l) => String(l.req_id).startsWith('brute-'));
    expect(brute).toHaveLength(1_000);
    expect(brute.every((l) => l.status === 401 && l.code === 'invalid_api_key')).toBe(true);
    // Nothing else was logged meanwhile: no line per attempt beyond its request line.
    expect(lines.filter((l) => !String(l.req_id).startsWith('brute-') && l.status !== 401)).toEqual([]);
    const text = JSON.stringify(lines);
    expect(text).not.toContain('sk-guess-');
    expect(text).not.toContain('x'.repeat(43));
  }, 120_000);

  it('last_used_at: a use shows at once and is in the store after a restart', async () => {
    const user = await create({ name: 'user' });
    expect((await chatWith(user.key)).status).toBe(200);
    expect(Date.parse((await admin(`/admin/keys/${user.id}`)).body.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('a restart on the same data folder serves the same keys', async () => {
    const before = (await admin('/admin/keys')).body.data;
    gw.signal('SIGTERM');
    await gw.waitForExit();
    await gw.stop();
    gw = await start();
    expect((await admin('/admin/keys')).body.data).toEqual(before);
    // Written at shutdown, if not by the background flush before it.
    expect(before.find((k: Json) => k.name === 'user').last_used_at).not.toBeNull();
  });

  it('kill -9 in the middle of creates: after a restart every key is there whole, or not at all', async () => {
    const answered: Json[] = [];
    const creates = Array.from({ length: 40 }, (_, i) =>
      fetch(`${gw.url}/admin/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `burst-${i}`, description: `burst ${i}`, aliases: ['mana/fast-text'], max_concurrency: i + 1 }),
      }).then(
        async (res) => {
          if (res.status === 201) {
            const body: Json = await res.json();
            shown.push(body.key);
            answered.push(body);
          }
        },
        () => undefined,
      ),
    );
    // Let some of them through, then kill the process without any shutdown.
    await new Promise((resolve) => setTimeout(resolve, 15));
    process.kill(gw.pid, 'SIGKILL');
    await Promise.all(creates);
    await gw.waitForExit();
    await gw.stop();
    gw = await start();
    const burst = (await admin('/admin/keys')).body.data.filter((k: Json) => k.name.startsWith('burst-'));
    for (const key of burst) {
      const i = Number(key.name.slice('burst-'.length));
      expect(key).toMatchObject({ description: `burst ${i}`, aliases: ['mana/fast-text'], max_concurrency: i + 1, disabled: false });
    }
    const listed = new Set(burst.map((k: Json) => k.id));
    for (const body of answered) expect(listed.has(body.id)).toBe(true);
  });

  it('the secrets shown are nowhere in the database files or the logs', async () => {
    gw.signal('SIGTERM');
    await gw.waitForExit();
    const bytes = readdirSync(dataDir)
      .map((f) => readFileSync(join(dataDir, f)).toString('latin1'))
      .join('\n');
    expect(bytes).toContain('mana-api'); // the keys are there…
    expect(shown.length).toBeGreaterThan(5);
    for (const key of shown) {
      expect(bytes).not.toContain(key); // …their secrets are not
      expect(bytes).not.toContain(key.slice(16));
      expect(gw.output()).not.toContain(key.slice(16));
    }
  });
});

describe('service keys with --usage off', () => {
  it('are created, used and listed without usage recording, and found again after a restart', async () => {
    const offDir = mkdtempSync(join(tmpdir(), 'mana-keys-off-e2e-'));
    const startOff = (): Promise<GatewayProcess> =>
      spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, MANA_LLM_API_KEYS: STATIC_KEYS, MANA_LLM_DATA_DIR: offDir }, args: ['--usage', 'off'] });
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
    let off = await startOff();
    try {
      const create = await fetch(`${off.url}/admin/keys`, { method: 'POST', headers, body: JSON.stringify({ name: 'svc-off' }) });
      expect(create.status).toBe(201);
      const made = (await create.json()) as Json;
      expect(made.key).toMatch(KEY_FORMAT);
      const chat = (url: string): Promise<Response> =>
        fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${made.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
        });
      expect((await chat(off.url)).status).toBe(200);
      const list = (await (await fetch(`${off.url}/admin/keys`, { headers })).json()) as Json;
      expect(list.data.map((k: Json) => k.id)).toEqual(['env-1', 'env-2', made.id]);
      // Usage stays off: its routes still say so.
      expect((await fetch(`${off.url}/admin/usage/requests`, { headers })).status).toBe(404);

      off.signal('SIGTERM');
      await off.waitForExit();
      off = await startOff();
      expect((await chat(off.url)).status).toBe(200);
      expect((await fetch(`${off.url}/admin/keys/${made.id}`, { method: 'DELETE', headers })).status).toBe(200);
      expect((await chat(off.url)).status).toBe(401);
    } finally {
      await off.stop();
      rmSync(offDir, { recursive: true, force: true });
    }
  });

  it('on PostgreSQL: a key created on one replica is stored there and works on another', async () => {
    const postgres = await startTestPostgres();
    const replicas: GatewayProcess[] = [];
    try {
      // One at a time: the first seeds the shared config, the second reads it.
      for (const name of ['a', 'b']) {
        replicas.push(
          await spawnGateway({
            config,
            env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, MANA_LLM_DATABASE_URL: postgres.url, MANA_LLM_REPLICA_NAME: name },
            args: ['--usage', 'off'],
          }),
        );
      }
      const [a, b] = replicas as [GatewayProcess, GatewayProcess];
      const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
      const create = await fetch(`${a.url}/admin/keys`, { method: 'POST', headers, body: JSON.stringify({ name: 'svc-off-pg' }) });
      expect(create.status).toBe(201);
      const made = (await create.json()) as Json;
      const chat = async (url: string): Promise<number> => {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${made.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
        });
        await res.arrayBuffer();
        return res.status;
      };
      expect(await chat(a.url)).toBe(200);
      // B hears of the key by NOTIFY (or its next reconciliation, 10 s at most).
      const deadline = Date.now() + 15_000;
      let onB = await chat(b.url);
      while (onB !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        onB = await chat(b.url);
      }
      expect(onB).toBe(200);
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        const stored = await client.query<{ name: string }>('select name from service_keys');
        expect(stored.rows.map((row) => row.name)).toEqual(['svc-off-pg']);
      } finally {
        await client.end();
      }
    } finally {
      await Promise.all(replicas.map((r) => r.stop()));
      await postgres.stop();
    }
  }, 90_000);
});
