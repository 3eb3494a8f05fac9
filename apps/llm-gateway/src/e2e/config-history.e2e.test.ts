/**
 * Config history end to end: the built gateway process with usage recording in
 * its embedded SQLite file (the store suite runs the same queries on
 * PostgreSQL), real HTTP, and the config file read back from disk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { chmod, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakes, providersYaml, startFakes, startTestPostgres, type Fakes } from '@mana/llm-testkit';
import { aliasesYaml, chatOnce, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ADMIN_KEY = 'admin-key-e2e-history-51c2';
const ALIAS = 'mana/fast-text';

let fakes: Fakes<'one' | 'two'>;
let gw: GatewayProcess;
let dataDir: string;
let original: string;

beforeAll(async () => {
  fakes = await startFakes({ one: 'openai', two: 'openai' });
  dataDir = mkdtempSync(join(tmpdir(), 'mana-history-e2e-'));
  original =
    '# Team config: the rollback must bring back these bytes, comments included.\n' +
    'providers:\n' +
    providersYaml(fakes) +
    aliasesYaml({ [ALIAS]: ['one/m1'] }, ['one/m1']);
  gw = await spawnGateway({ config: original, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, MANA_LLM_DATA_DIR: dataDir } });
});

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

interface Call {
  status: number;
  headers: Headers;
  body: Json;
}

async function admin(target: GatewayProcess, path: string, init: { method?: string; body?: unknown; ifMatch?: string } = {}): Promise<Call> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
  if (init.ifMatch !== undefined) headers['if-match'] = init.ifMatch;
  const res = await fetch(`${target.url}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

const file = (): Promise<string> => readFile(gw.configPath, 'utf8');
const resolvedBy = async (): Promise<string | null> => (await chatOnce(gw.url, ALIAS)).headers.get('x-mana-llm-resolved');

describe('config history', () => {
  let startupVersion: string;
  let putVersion: string;

  it('records the config the gateway started with, and the listing names the current version', async () => {
    const config = await admin(gw, '/admin/config');
    startupVersion = config.body.version;
    const history = await admin(gw, '/admin/config/history');
    expect(history.status).toBe(200);
    expect(history.body).toMatchObject({ object: 'list', current_version: startupVersion, next_cursor: null });
    expect(history.body.data).toEqual([{ version: startupVersion, source: 'startup', applied_at: expect.any(String) }]);
    expect(history.headers.get('etag')).toBe(`"${startupVersion}"`);

    const one = await admin(gw, `/admin/config/history/${startupVersion}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ version: startupVersion, source: 'startup', text: original, previous_version: null, diff: null });
  });

  it('an admin PUT is a new version whose diff against the startup one shows just the changed chain line', async () => {
    expect(await resolvedBy()).toBe('one/m1');
    const put = await admin(gw, `/admin/aliases/${ALIAS}`, { method: 'PUT', body: { description: `${ALIAS} (test)`, chain: ['two/m2'] } });
    expect(put.status).toBe(200);
    putVersion = put.body.version;
    expect(putVersion).not.toBe(startupVersion);
    expect(await resolvedBy()).toBe('two/m2');

    const history = await admin(gw, '/admin/config/history');
    expect(history.body.data.map((v: Json) => [v.version, v.source])).toEqual([
      [putVersion, 'admin'],
      [startupVersion, 'startup'],
    ]);

    const shown = await admin(gw, `/admin/config/history/${putVersion}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ version: putVersion, source: 'admin', previous_version: startupVersion, text: await file() });
    const diff: string = shown.body.diff;
    expect(diff).toContain(`--- config@${startupVersion}`);
    expect(diff).toContain(`+++ config@${putVersion}`);
    const changed = diff.split('\n').filter((line) => /^[+-](?![+-]{2} )/.test(line));
    expect(changed).toEqual(['-      - one/m1', '+      - two/m2']);
  });

  it('a rollback with a stale If-Match is 412 and leaves the file alone', async () => {
    const before = await file();
    const stale = await admin(gw, '/admin/config/rollback', { method: 'POST', body: { version: startupVersion }, ifMatch: `"${startupVersion}"` });
    expect(stale.status).toBe(412);
    expect(stale.body.error.code).toBe('version_conflict');
    expect(await file()).toBe(before);
    expect(await resolvedBy()).toBe('two/m2');
  });

  it('a rollback to the startup version restores the file byte for byte, serves the old chain again and is recorded', async () => {
    const rollback = await admin(gw, '/admin/config/rollback', { method: 'POST', body: { version: startupVersion }, ifMatch: `"${putVersion}"` });
    expect(rollback.status).toBe(200);
    expect(rollback.body).toEqual({ object: 'config.rollback', version: startupVersion, previous_version: putVersion, changed: true });
    expect(rollback.headers.get('etag')).toBe(`"${startupVersion}"`);
    expect(await file()).toBe(original);
    expect(await resolvedBy()).toBe('one/m1');

    const history = await admin(gw, '/admin/config/history?limit=2');
    expect(history.body.data.map((v: Json) => [v.version, v.source])).toEqual([
      [startupVersion, 'rollback'],
      [putVersion, 'admin'],
    ]);
    expect(typeof history.body.next_cursor).toBe('string');
    const rest = await admin(gw, `/admin/config/history?limit=2&cursor=${history.body.next_cursor}`);
    expect(rest.body.data.map((v: Json) => v.source)).toEqual(['startup']);
  });

  it('a hand edit picked up by SIGHUP, and one by POST /admin/reload, are recorded with their source', async () => {
    await gw.writeConfig(`${original}# edited by hand\n`);
    gw.signal('SIGHUP');
    await gw.waitForLog((line) => line.msg === 'config reloaded');
    await gw.writeConfig(`${original}# edited again\n`);
    expect((await admin(gw, '/admin/reload', { method: 'POST' })).status).toBe(200);
    const history = await admin(gw, '/admin/config/history?limit=2');
    expect(history.body.data.map((v: Json) => v.source)).toEqual(['reload', 'signal']);
    const shown = await admin(gw, `/admin/config/history/${history.body.data[0].version}`);
    expect(shown.body.diff.split('\n').filter((line: string) => /^[+-](?![+-]{2} )/.test(line))).toEqual(['-# edited by hand', '+# edited again']);
  });

  it('a rollback onto a read-only file is 409 config_read_only; the file and the running config stay as they were', async () => {
    const before = await file();
    const putRecorded = (await admin(gw, '/admin/config/history')).body.data.length;
    await chmod(gw.configPath, 0o444);
    try {
      const rollback = await admin(gw, '/admin/config/rollback', { method: 'POST', body: { version: putVersion } });
      expect(rollback.status).toBe(409);
      expect(rollback.body.error.code).toBe('config_read_only');
    } finally {
      await chmod(gw.configPath, 0o644);
    }
    expect(await file()).toBe(before);
    expect(await resolvedBy()).toBe('one/m1');
    expect((await admin(gw, '/admin/config/history')).body.data).toHaveLength(putRecorded);
  });

  it('never shows a key written into the file by hand, in the text or the diff', async () => {
    const secret = 'sk-hand-written-e2e-7731';
    await gw.writeConfig(original.replace('api_key_required: false }', `api_key: "${secret}" }`));
    expect((await admin(gw, '/admin/reload', { method: 'POST' })).status).toBe(200);
    const [newest] = (await admin(gw, '/admin/config/history?limit=1')).body.data;
    const shown = await admin(gw, `/admin/config/history/${newest.version}`);
    expect(shown.status).toBe(200);
    expect(shown.body.diff).toContain('+  one: { type: openai, base_url:');
    expect(JSON.stringify(shown.body)).not.toContain(secret);
    expect(shown.body.text).toContain('<redacted>');
  });

  it('a LiteLLM /model/new write is recorded as an admin version whose diff adds the new alias', async () => {
    const before = await admin(gw, '/admin/config');
    const added = await admin(gw, '/model/new', { method: 'POST', body: { model_name: 'ha', litellm_params: { model: 'openai/m-live', api_base: fakes.one.baseUrl } } });
    expect(added.status).toBe(200);
    const now = await admin(gw, '/admin/config');
    const [newest] = (await admin(gw, '/admin/config/history?limit=1')).body.data;
    expect(newest).toMatchObject({ version: now.body.version, source: 'admin' });
    const shown = await admin(gw, `/admin/config/history/${newest.version}`);
    expect(shown.body.previous_version).toBe(before.body.version);
    expect(shown.body.diff).toMatch(/^\+ {2}ha:$/m);
    expect(shown.body.diff.split('\n').filter((line: string) => line.startsWith('-') && !line.startsWith('---'))).toEqual([]);
  });

  it('refuses an unknown version (404 config_version_not_found), a body without one (400) and a bad limit (400)', async () => {
    for (const version of ['0123456789abcdef', "x' OR 1=1 --"]) {
      const shown = await admin(gw, `/admin/config/history/${encodeURIComponent(version)}`);
      expect(shown.status).toBe(404);
      expect(shown.body.error.code).toBe('config_version_not_found');
    }
    const rollback = await admin(gw, '/admin/config/rollback', { method: 'POST', body: { version: '0123456789abcdef' } });
    expect(rollback.status).toBe(404);
    expect(rollback.body.error.code).toBe('config_version_not_found');
    const noVersion = await admin(gw, '/admin/config/rollback', { method: 'POST', body: { to: 'x' } });
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.error).toMatchObject({ code: 'invalid_request', param: 'version' });
    const limit = await admin(gw, '/admin/config/history?limit=1000000000');
    expect(limit.status).toBe(400);
    expect(limit.body.error).toMatchObject({ code: 'invalid_usage_query', param: 'limit' });
    const noKey = await fetch(`${gw.url}/admin/config/history`);
    expect(noKey.status).toBe(401);
  });

  it('with --usage off the history routes are 404 usage_disabled', async () => {
    const off = await spawnGateway({ config: original, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY }, args: ['--usage', 'off'] });
    try {
      for (const [path, method] of [
        ['/admin/config/history', 'GET'],
        ['/admin/config/history/0123456789abcdef', 'GET'],
        ['/admin/config/rollback', 'POST'],
      ] as const) {
        const call = await admin(off, path, { method, body: method === 'POST' ? { version: '0123456789abcdef' } : undefined });
        expect(call.status).toBe(404);
        expect(call.body.error.code).toBe('usage_disabled');
      }
    } finally {
      await off.stop();
    }
  });
});

describe('config history on PostgreSQL', () => {
  it('PostgreSQL holds the config then (shared by replicas): a write while it is stopped is 503 and changes nothing; once back, writes apply and are recorded', async (ctx) => {
    const pg = await startTestPostgres();
    if (!pg.ownsServer) {
      await pg.stop();
      return ctx.skip('an external PostgreSQL server is not this test\'s to stop');
    }
    const pgGw = await spawnGateway({ config: original, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, MANA_LLM_DATABASE_URL: pg.url } });
    try {
      const history = await admin(pgGw, '/admin/config/history');
      expect(history.body.data.map((v: Json) => v.source)).toEqual(['startup']);
      const resolvedBefore = (await chatOnce(pgGw.url, ALIAS)).headers.get('x-mana-llm-resolved');

      await pg.pauseServer();
      const started = performance.now();
      const put = await admin(pgGw, `/admin/aliases/${ALIAS}`, { method: 'PUT', body: { description: `${ALIAS} (test)`, chain: ['two/m2'] } });
      // A write every replica must apply cannot land while the shared database is away; bounded by its 2 s connect timeout.
      expect(put.status).toBe(503);
      expect(put.body.error.code).toBe('shared_config_unavailable');
      expect(performance.now() - started).toBeLessThan(5_000);
      expect((await chatOnce(pgGw.url, ALIAS)).headers.get('x-mana-llm-resolved')).toBe(resolvedBefore);
      const down = await admin(pgGw, '/admin/config/history');
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('usage_store_unavailable');

      await pg.resumeServer();
      const again = await admin(pgGw, `/admin/aliases/${ALIAS}`, { method: 'PUT', body: { description: `${ALIAS} (test)`, chain: ['two/m2'] } });
      expect(again.status).toBe(200);
      expect((await chatOnce(pgGw.url, ALIAS)).headers.get('x-mana-llm-resolved')).toBe('two/m2');
      const after = await admin(pgGw, '/admin/config/history');
      expect(after.status).toBe(200);
      expect(after.body.data.map((v: Json) => [v.version, v.source])).toEqual([
        [again.body.version, 'admin'],
        [history.body.data[0].version, 'startup'],
      ]);
    } finally {
      await pgGw.stop();
      await pg.stop();
    }
  }, 90_000);
});
