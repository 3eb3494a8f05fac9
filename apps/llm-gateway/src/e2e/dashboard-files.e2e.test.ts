/**
 * The dashboard's static files through the built gateway process: what a
 * browser gets (content types, CSP, caching, gzip), that no request path
 * reaches outside the built folder, the admin key on the two read-only views
 * the dashboard shows (health, aliases), and "probe now".
 */
import { request } from 'node:http';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakes, providersYaml, refusingPort, startFakes, type Fakes } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ADMIN_KEY = 'admin-key-dashboard-e2e-5k2p';
const API_KEY = 'client-key-dashboard-e2e-8w1d';

let fakes: Fakes<'ok'>;
let gw: GatewayProcess;

beforeAll(async () => {
  fakes = await startFakes({ ok: 'openai' });
  const dead = await refusingPort();
  const config =
    'settings:\n  probe_interval: 1h\n' +
    'providers:\n' +
    `  dead: { type: openai, base_url: "http://127.0.0.1:${dead}/v1", api_key_required: false }\n` +
    providersYaml(fakes) +
    aliasesYaml({}, ['dead/m', 'ok/m']);
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN_KEY, MANA_LLM_API_KEYS: API_KEY } });
});

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request with the path exactly as given (fetch would normalise `..` and backslashes away). */
function raw(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function assetPaths(): Promise<{ js: string; css: string }> {
  const html = (await raw('/ui/')).body.toString();
  return { js: /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)![1]!, css: /href="(\/ui\/assets\/[^"]+\.css)"/.exec(html)![1]! };
}

describe('GET /ui/', () => {
  it('redirects /ui to /ui/ and serves index.html with a strict CSP that allows no inline script or style', async () => {
    const redirect = await raw('/ui');
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe('/ui/');
    const page = await raw('/ui/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    const html = page.body.toString();
    expect(html).toContain('<div id="app">');
    // No inline script or style for the CSP to refuse: every script has a src, there is no <style>.
    expect(html.match(/<script\b[^>]*>/g)!.every((tag) => tag.includes('src="/ui/assets/'))).toBe(true);
    expect(html).not.toMatch(/<style|style="/);
  });

  it('serves hashed assets with their content type, cached for a year, gzipped when asked, 304 when unchanged', async () => {
    const { js, css } = await assetPaths();
    const script = await raw(js);
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['content-encoding']).toBeUndefined();
    const style = await raw(css);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');

    const zipped = await raw(js, { 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('accept-encoding');
    expect(zipped.body.length).toBeLessThan(script.body.length / 2);
    const refused = await raw(js, { 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();

    const again = await raw(js, { 'if-none-match': String(script.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);

    const head = await raw(js, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(script.body.length);
    expect(head.body.length).toBe(0);
  });

  it('is a 404 for every path outside the built folder, however it is spelled', async () => {
    const packageJson = await readFile(new URL('../../package.json', import.meta.url), 'utf8');
    const paths = [
      '/ui/../package.json',
      '/ui/..%2f..%2fpackage.json',
      '/ui/%2e%2e/%2e%2e/package.json',
      '/ui/%2E%2E%2Fpackage.json',
      '/ui/..\\..\\package.json',
      '/ui/..%5c..%5cpackage.json',
      '/ui/assets/../../package.json',
      '/ui//etc/passwd',
      '/ui/%2fetc%2fpasswd',
      '/ui/file:///etc/passwd',
      '/ui/index.html%00.js',
      '/ui/.env',
      `/ui/${'a/'.repeat(400)}x.js`,
    ];
    for (const path of paths) {
      const answer = await raw(path);
      expect(answer.status, path).toBe(404);
      const body = answer.body.toString();
      expect(JSON.parse(body).error.code, path).toBe('not_found');
      expect(body).not.toContain(packageJson.slice(0, 40));
      expect(body).not.toContain('root:');
    }
    // Other methods are refused by the route table.
    expect((await raw('/ui/', {}, 'POST')).status).toBe(405);
  });
});

describe('the admin key on the dashboard read-only views', () => {
  it('reads /v1/health and /v1/aliases with the admin key or an API key; anything else is 401', async () => {
    for (const path of ['/v1/health', '/v1/aliases']) {
      for (const key of [ADMIN_KEY, API_KEY]) {
        const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status, `${path} with a key`).toBe(200);
      }
      const none = await fetch(`${gw.url}${path}`);
      expect(none.status).toBe(401);
      expect(((await none.json()) as Json).error.code).toBe('missing_api_key');
      const wrong = await fetch(`${gw.url}${path}`, { headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as Json).error.code).toBe('invalid_api_key');
    }
    // The admin key still opens nothing else an API key opens (a completion needs an API key).
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(401);
  });
});

describe('POST /admin/health/probe', () => {
  it('probes every provider now and answers the health it found; needs the admin key', async () => {
    const before = (await (await fetch(`${gw.url}/v1/health`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as Json;
    // probe_interval is 1 h: after the start-up round nothing else probes during this test.
    const lastCheck = (name: string, health: Json) => health.providers.find((p: Json) => p.provider === name).last_check;
    const probed = await fetch(`${gw.url}/admin/health/probe`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(probed.status).toBe(200);
    const health = (await probed.json()) as Json;
    const dead = health.providers.find((p: Json) => p.provider === 'dead');
    const live = health.providers.find((p: Json) => p.provider === 'ok');
    expect(dead.healthy).toBe(false);
    expect(dead.last_error).toMatch(/refused|ECONNREFUSED/i);
    expect(live.healthy).toBe(true);
    expect(Date.parse(lastCheck('ok', health))).toBeGreaterThan(Date.parse(lastCheck('ok', before) ?? '1970-01-01'));
    expect((await fetch(`${gw.url}/admin/health/probe`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(403);
  });
});
