/**
 * What a user's own config can do to the running gateway process: a local
 * server without a key, a base_url with a query string or credentials, a
 * config path that is not a regular file, and an invalid value that came from
 * the environment (never echoed).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { DIST_MAIN, aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const MYKEY = 'sk-live-e2e-0123456789abcdef';

let local: FakeUpstream;
const running: GatewayProcess[] = [];

async function start(options: Parameters<typeof spawnGateway>[0]): Promise<GatewayProcess> {
  const gateway = await spawnGateway(options);
  running.push(gateway);
  return gateway;
}

async function complete(gateway: GatewayProcess, model: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  local = await startFakeOpenAI();
  local.on('m1', { kind: 'answer', content: 'hello from a keyless server' });
});

afterAll(async () => {
  await Promise.all(running.map((g) => g.stop()));
  await local?.close();
});

describe('api_key', () => {
  it('not written → called without Authorization; ${VAR} unset → unconfigured naming VAR; only used providers are warned about', async () => {
    const gateway = await start({
      config:
        `providers:\n` +
        `  local: { type: openai, base_url: "${local.baseUrl}" }\n` +
        `  keyed: { type: openai, base_url: "${local.baseUrl}", api_key: "\${E2E_UNSET_KEY}" }\n` +
        aliasesYaml({ 'mana/keyed': ['keyed/m1'] }, ['local/m1']),
    });
    const ok = await complete(gateway, 'mana/fast-text');
    expect(ok.status).toBe(200);
    expect(ok.body.choices[0].message.content).toBe('hello from a keyless server');
    const seen = local.requests.find((r) => r.model === 'm1')!;
    expect(seen.headers.authorization).toBeUndefined();

    const keyed = await complete(gateway, 'mana/keyed');
    expect(keyed.status).toBe(503);
    expect(keyed.body.error.code).toBe('no_healthy_provider');
    expect(JSON.stringify(keyed.body.error.attempts)).toContain('E2E_UNSET_KEY');

    const warning = gateway.logs.find((l) => l.msg === 'some providers are unconfigured: their targets are skipped');
    // The built-in cloud providers have no keys here either, but no alias uses them.
    expect(warning?.providers).toEqual(['keyed: missing api key (E2E_UNSET_KEY)']);
  });
});

describe('base_url', () => {
  it('a query string is sent on every call', async () => {
    const gateway = await start({
      config:
        `providers:\n  azure: { type: openai, base_url: "${local.baseUrl}?api-version=2024-10-21", check_models: true }\n` +
        aliasesYaml({}, ['azure/m1']),
    });
    expect((await complete(gateway, 'mana/fast-text')).status).toBe(200);
    const chat = local.requests.filter((r) => r.model === 'm1').at(-1)!;
    expect(chat.path).toBe('/v1/chat/completions');
    expect(chat.query).toBe('?api-version=2024-10-21');
    await expect.poll(() => local.probes.some((p) => p.query === '?api-version=2024-10-21'), { timeout: 10_000 }).toBe(true);
  });

  it('user info is refused at start, naming the file, line and provider, never the password', async () => {
    const config =
      `providers:\n  local:\n    type: openai\n    base_url: "http://\${E2E_AUTH}@127.0.0.1:9/v1"\n` + aliasesYaml({}, ['local/m1']);
    await expect(start({ config, env: { E2E_AUTH: 'admin:hunter2-pw' } })).rejects.toThrow(
      /invalid config at \S+aliases\.yaml line 4: provider local base_url must not contain a user name or password/,
    );
  });
});

describe('config file kinds', () => {
  it('a FIFO at reload is refused at once; later reloads and SIGTERM keep working', async () => {
    const good = `providers:\n  local: { type: openai, base_url: "${local.baseUrl}" }\n` + aliasesYaml({}, ['local/m1']);
    const gateway = await start({ config: good, env: { MANA_LLM_ADMIN_KEY: 'admin-e2e' } });
    const fifo = `${gateway.configPath}.fifo`;
    execFileSync('mkfifo', [fifo]);
    await rename(fifo, gateway.configPath);

    gateway.signal('SIGHUP');
    const failed = await gateway.waitForLog((l) => l.msg === 'config reload failed: the previous config keeps serving', 5_000);
    expect(String(failed.error)).toContain('not a regular file (a FIFO)');
    expect((await complete(gateway, 'mana/fast-text')).status).toBe(200);

    await gateway.writeConfig(good.replace('mana/fast-text (test)', 'fast text, reloaded'));
    const res = await fetch(`${gateway.url}/admin/reload`, { method: 'POST', headers: { authorization: 'Bearer admin-e2e' } });
    expect(res.status).toBe(200);
    expect((await complete(gateway, 'mana/fast-text')).status).toBe(200);

    gateway.signal('SIGTERM');
    const exit = await Promise.race([gateway.waitForExit(), new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('a FIFO or a directory as the config at start is refused at once with a clear error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mana-gw-fifo-'));
    try {
      const fifo = join(dir, 'aliases.yaml');
      execFileSync('mkfifo', [fifo]);
      for (const [path, kind] of [[fifo, 'a FIFO'], [dir, 'a directory']] as const) {
        const run = spawnSync(process.execPath, [DIST_MAIN, '--config', path, '--port', '0'], {
          env: { PATH: process.env.PATH ?? '' },
          encoding: 'utf8',
          timeout: 15_000,
        });
        expect(run.status).toBe(1);
        expect(run.stderr).toContain(`invalid config at ${path}: cannot read the file (not a regular file (${kind}))`);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('config errors from the environment', () => {
  it('a reload whose invalid value came from ${MYKEY} names the variable, never its value (422 body and log)', async () => {
    const good = `providers:\n  local: { type: openai, base_url: "${local.baseUrl}" }\n` + aliasesYaml({}, ['local/m1']);
    const gateway = await start({ config: good, env: { MANA_LLM_ADMIN_KEY: 'admin-e2e', MYKEY } });
    await gateway.writeConfig(good.replace('type: openai', 'type: "${MYKEY}"'));
    const res = await fetch(`${gateway.url}/admin/reload`, { method: 'POST', headers: { authorization: 'Bearer admin-e2e' } });
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(body).toContain('provider local has unknown type \\"${MYKEY}\\"');
    await gateway.waitForLog((l) => l.msg === 'config reload failed: the previous config keeps serving');
    for (const text of [body, gateway.output()]) {
      expect(text).not.toContain(MYKEY);
      expect(text).not.toContain('0123456789abcdef');
    }
  });
});

describe('provider headers', () => {
  // The header sits on line 6 of this config; undici would refuse it on every call.
  const withHeader = (line: string): string =>
    `providers:\n  local:\n    type: openai\n    base_url: "${local.baseUrl}"\n    headers:\n      ${line}\n` + aliasesYaml({}, ['local/m1']);

  it.each([
    ['a value with CR LF', 'X-Title: "mana\\r\\nX-Injected: 1"', 'provider local header X-Title must be one line of printable characters (no CR, LF or other control characters)'],
    ['a value from ${VAR} holding a line break', 'X-Title: "${E2E_HEADER_VALUE}"', 'provider local header X-Title must be one line of printable characters (no CR, LF or other control characters)'],
    ['Transfer-Encoding', 'Transfer-Encoding: chunked', 'provider local header Transfer-Encoding is set by the gateway itself'],
    ['Content-Length', 'content-length: "5"', 'provider local header content-length is set by the gateway itself'],
    ['a name with a space', '"X Title": mana', 'provider local header name "X Title" is not a valid HTTP header name'],
  ])('%s is refused at start with its line, never quoting the value', async (_what, line, message) => {
    const start$ = start({ config: withHeader(line), env: { E2E_HEADER_VALUE: 'sk-header-e2e\r\nX-Injected: 1' } });
    const error: Error = await start$.then(
      () => new Error('the gateway started'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(new RegExp(`invalid config at \\S+aliases\\.yaml line 6: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    expect(error.message).not.toContain('sk-header-e2e');
  });
});

describe('${VAR} is expanded only where a secret or an address belongs', () => {
  const ADMIN_KEY = 'admin-key-e2e-expansion-6f2a';
  const QUERY_KEY = 'sk-query-from-env-e2e-5d1c';
  const LITERAL_QUERY_KEY = 'sk-query-literal-e2e-83b0';

  it('a description "${MANA_LLM_ADMIN_KEY}" is shown as written: the key is in no model list, alias list, metric or header', async () => {
    const config =
      `providers:\n  local: { type: openai, base_url: "${local.baseUrl}" }\n` +
      aliasesYaml({}, ['local/m1']).replace('description: "mana/fast-text (test)"', 'description: "${MANA_LLM_ADMIN_KEY}"');
    const gateway = await start({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } });
    const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
    const models: Json = await (await fetch(`${gateway.url}/v1/models`)).json();
    expect(models.data.find((m: Json) => m.id === 'mana/fast-text').description).toBe('${MANA_LLM_ADMIN_KEY}');
    const shown = [
      JSON.stringify(models),
      await (await fetch(`${gateway.url}/v1/aliases`)).text(),
      await (await fetch(`${gateway.url}/metrics`)).text(),
      JSON.stringify([...chat.headers]),
    ];
    for (const text of shown) expect(text).not.toContain(ADMIN_KEY);
  });

  it('a target "local/${MANA_LLM_ADMIN_KEY}" is refused at start with its line, quoted as written', async () => {
    const config = `providers:\n  local: { type: openai, base_url: "${local.baseUrl}" }\n` + aliasesYaml({ 'mana/leak': ['local/${MANA_LLM_ADMIN_KEY}'] }, ['local/m1']);
    const error: Error = await start({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY } }).then(
      () => new Error('the gateway started'),
      (e: Error) => e,
    );
    expect(error.message).toMatch(/invalid config at \S+aliases\.yaml line \d+ \(alias mana\/leak\): target local\/\$\{MANA_LLM_ADMIN_KEY\}: \$\{VAR\} is not expanded in a target/);
    expect(error.message).not.toContain(ADMIN_KEY);
  });

  it("a key in a base_url's query string reaches the upstream, but /admin/providers, /admin/config, /model/info and the config history show <redacted>", async () => {
    const config =
      `providers:\n` +
      `  local: { type: openai, base_url: "${local.baseUrl}" }\n` +
      `  fromenv: { type: openai, base_url: "${local.baseUrl}?api-version=1&key=\${E2E_QUERY_KEY}" }\n` +
      `  literal: { type: openai, base_url: "${local.baseUrl}?api_key=${LITERAL_QUERY_KEY}" }\n` +
      aliasesYaml({ 'mana/env': ['fromenv/m1'], 'mana/literal': ['literal/m1'] }, ['local/m1']);
    const gateway = await start({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, E2E_QUERY_KEY: QUERY_KEY } });
    for (const model of ['mana/env', 'mana/literal']) expect((await complete(gateway, model)).status).toBe(200);
    const queries = local.requests.filter((r) => r.model === 'm1').map((r) => r.query);
    expect(queries).toEqual(expect.arrayContaining([`?api-version=1&key=${QUERY_KEY}`, `?api_key=${LITERAL_QUERY_KEY}`]));

    const adminGet = async (path: string): Promise<Json> => (await fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json();
    const providers = await adminGet('/admin/providers');
    const baseUrls = Object.fromEntries(providers.data.map((p: Json) => [p.name, p.base_url]));
    expect(baseUrls.fromenv).toBe(`${local.baseUrl}?api-version=<redacted>&key=<redacted>`);
    expect(baseUrls.literal).toBe(`${local.baseUrl}?api_key=<redacted>`);
    const history = await adminGet('/admin/config/history');
    const shown = [
      JSON.stringify(providers),
      JSON.stringify(await adminGet('/admin/providers/literal')),
      JSON.stringify(await adminGet('/admin/config')),
      JSON.stringify(await adminGet('/model/info')),
      JSON.stringify(await adminGet(`/admin/config/history/${history.data[0].version}`)),
    ];
    for (const text of shown) {
      expect(text).not.toContain(QUERY_KEY);
      expect(text).not.toContain(LITERAL_QUERY_KEY);
    }
    expect(shown[2]).toContain('?api_key=<redacted>');
  });
});
