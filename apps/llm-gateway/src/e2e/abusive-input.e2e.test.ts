/**
 * End to end: answers and requests meant to hurt the gateway — an absurd
 * Retry-After, model ids that cannot be a header value or a bounded metric
 * label, deeply nested JSON. Each must get a clear answer and leave routing
 * working for everyone else.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ONE_HOUR_S = 3_600;

let cloud: FakeUpstream;
let gw: GatewayProcess;

function chat(model: string, extra: Record<string, unknown> = {}): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
}

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('limited-seconds', { kind: 'status', status: 429, headers: { 'retry-after': '10000000000000' } });
  cloud.on('limited-date', { kind: 'status', status: 429, headers: { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' } });
  cloud.on('limited-negative', { kind: 'status', status: 429, headers: { 'retry-after': '-5' } });
  const config =
    `settings:\n  probe_interval: 60s\n  rate_limit_cooldown: 2s\n` +
    `providers:\n  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "sk-test" }\n` +
    aliasesYaml(
      {
        'mana/limited-seconds': ['cloud/limited-seconds', 'cloud/m2'],
        'mana/limited-date': ['cloud/limited-date', 'cloud/m2'],
        'mana/limited-negative': ['cloud/limited-negative', 'cloud/m2'],
      },
      ['cloud/m2'],
    );
  gw = await spawnGateway({ config, args: ['--max-body', '32mb'] });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

describe('an absurd Retry-After from an upstream', () => {
  it.each([
    ['10000000000000 seconds', 'limited-seconds'],
    ['an HTTP-date in the year 9999', 'limited-date'],
  ])('(%s) is clamped to one hour: the alias keeps failing over, /v1/aliases answers, the direct target says Retry-After ≤ 1 h', async (_name, model) => {
    for (let i = 0; i < 3; i++) {
      const res = await chat(`mana/${model}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m2');
    }
    const aliases = await fetch(`${gw.url}/v1/aliases`);
    expect(aliases.status).toBe(200);
    const view = ((await aliases.json()) as Json).data.find((a: Json) => a.alias === `mana/${model}`);
    const cooling = view.chain.find((t: Json) => t.target === `cloud/${model}`);
    expect(cooling.state).toBe('cooling_down');
    expect(Date.parse(cooling.until) - Date.now()).toBeLessThanOrEqual(ONE_HOUR_S * 1000);

    const direct = await chat(`cloud/${model}`);
    expect(direct.status).toBe(503);
    const retryAfter = Number(direct.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(ONE_HOUR_S - 60);
    expect(retryAfter).toBeLessThanOrEqual(ONE_HOUR_S);
  });

  it('a negative Retry-After is ignored: the configured rate_limit_cooldown applies', async () => {
    expect((await chat('mana/limited-negative')).status).toBe(200);
    const direct = await chat('cloud/limited-negative');
    expect(direct.status).toBe(503);
    expect(Number(direct.headers.get('retry-after'))).toBeLessThanOrEqual(2);
  });
});

describe('model ids chosen by the caller', () => {
  it('an id that is not a valid header value (non-ASCII, control characters) is a 400 invalid_model, before any upstream call', async () => {
    const before = cloud.count();
    for (const model of ['cloud/ok:模型', 'cloud/a\u0007b', 'cloud/caf\u00e9']) {
      const res = await chat(model);
      expect(res.status).toBe(400);
      const body = (await res.json()) as Json;
      expect(body.error).toMatchObject({ code: 'invalid_model', param: 'model', type: 'invalid_request_error' });
    }
    expect(cloud.count()).toBe(before);
    expect((await chat('cloud/m2')).status).toBe(200);
  });

  it('an id longer than 256 characters is a 400 invalid_model', async () => {
    const res = await chat('cloud/' + 'x'.repeat(251));
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error.code).toBe('invalid_model');
    expect((await chat('cloud/' + 'x'.repeat(250))).status).toBe(200);
  });

  it('distinct direct ids never become metric label values: they count under target="other"', async () => {
    for (let i = 0; i < 40; i++) expect((await chat(`cloud/caller-chosen-${i}`)).status).toBe(200);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).not.toContain('caller-chosen');
    const line = metrics.split('\n').find((l) => l.startsWith('mana_llm_requests_total{api="chat_completions",alias="direct",target="other",status="200"}'));
    expect(Number(line?.split(' ').pop())).toBeGreaterThanOrEqual(40);
    expect(metrics).toContain('mana_llm_attempts_total{target="other",outcome="ok"}');
    // Configured chain targets keep their own label.
    expect(metrics).toMatch(/mana_llm_requests_total\{api="chat_completions",alias="mana\/limited-seconds",target="cloud\/m2",status="200"\} \d+/);
  });
});

describe('deeply nested JSON', () => {
  it('a 20 MB body of nested brackets is refused with 400 within 2 s including the upload (it took ~5 s of blocked event loop), and /healthz answers at once after', async () => {
    const depth = 10_000_000;
    const body = '{"messages":' + '['.repeat(depth) + ']'.repeat(depth) + '}';
    const started = performance.now();
    const deep = fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const res = await deep;
    const elapsed = performance.now() - started;
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('nests deeper than 64') });
    // Before the fix this took ~5 s of parsing with the event loop blocked (the scan: ~12 ms; the rest is the upload).
    expect(elapsed).toBeLessThan(2_000);
    const health = performance.now();
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect(performance.now() - health).toBeLessThan(500);
  });
});
