/**
 * Abusive upstreams: answers meant to exhaust or wedge the gateway — an absurd
 * Retry-After, a model id that cannot be a header value, huge bodies (success
 * and error), endless role-only stream chunks, an endless stream line. Each
 * case must end with a documented outcome within its time bound (fail over
 * with reason `response_too_large`, or a truncated relay), leave routing
 * working, and the gateway's RSS must stay under RSS_BOUND_MB throughout
 * (sampled every 20 ms). Upstream data is bounded per provider here by small
 * settings (`tight`), and by the defaults (`cloud`: 32 MiB body, 64 KiB error
 * body, 4 MiB stream event, 1 MiB before the first delta).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { CLIENT_KEY, chat, configYaml, finishSuite, request, startGateway, streamEnding, type GatewayProcess } from './harness.js';

/** Before the bounds, one 300 MB answer alone took the gateway to 1.9 GB. */
const RSS_BOUND_MB = 300;
const HUGE = 300 * 1024 * 1024; // 300 MB, sent by the fake as it goes (never held whole)
const TIGHT = { max_response_bytes: '1mb', max_error_body_bytes: '16kb', max_stream_event_bytes: '256kb', max_pre_commit_bytes: '256kb' };
const BOUND_MS = 10_000;

let openai: FakeUpstream;
let ollama: FakeUpstream;
let gw: GatewayProcess;
let peakRssMb = 0;
let sampler: NodeJS.Timeout | undefined;

function sampleRss(): void {
  try {
    const status = readFileSync(`/proc/${gw.pid}/status`, 'utf8');
    peakRssMb = Math.max(peakRssMb, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024);
  } catch {
    // the process is gone: the next assertion says so
  }
}

beforeAll(async () => {
  openai = await startFakeOpenAI();
  ollama = await startFakeOllama();
  openai.on('limited', { kind: 'status', status: 429, headers: { 'retry-after': '10000000000000' } });
  openai.on('huge', { kind: 'huge_body', bytes: HUGE });
  openai.on('huge-64mb', { kind: 'huge_body', bytes: 64 * 1024 * 1024 });
  openai.on('huge-400', { kind: 'huge_body', bytes: HUGE, status: 400 });
  openai.on('roles', { kind: 'endless_role_chunks' });
  openai.on('line', { kind: 'endless_line' });
  ollama.on('line', { kind: 'endless_line' });
  gw = await startGateway({
    config: configYaml({
      settings: { probe_interval: '60s', first_byte_timeout: '20s' },
      providers: {
        cloud: { url: openai.baseUrl },
        tight: { url: openai.baseUrl, settings: TIGHT },
        local: { url: ollama.url, type: 'ollama', settings: TIGHT },
      },
      aliases: {
        'mana/limited': ['cloud/limited', 'cloud/m2'],
        'mana/huge-tight': ['tight/huge', 'cloud/m2'],
        'mana/huge-default': ['cloud/huge-64mb', 'cloud/m2'],
        'mana/roles-tight': ['tight/roles', 'cloud/m2'],
        'mana/roles-default': ['cloud/roles', 'cloud/m2'],
        'mana/line-tight': ['tight/line', 'cloud/m2'],
        'mana/line-ollama': ['local/line', 'cloud/m2'],
        'mana/line-default': ['cloud/line', 'cloud/m2'],
        'mana/error-tight': ['tight/huge-400', 'cloud/m2'],
        'mana/error-default': ['cloud/huge-400', 'cloud/m2'],
      },
      defaultChain: ['cloud/m2'],
    }),
  });
  sampleRss();
  sampler = setInterval(sampleRss, 20);
});

afterAll(async () => {
  clearInterval(sampler);
  await finishSuite(gw, [openai, ollama]);
});

/** The request failed over from its first target for `response_too_large` and the backup answered in full. */
async function expectFailover(alias: string, stream: boolean): Promise<void> {
  const before = await gw.metrics();
  const res = await chat(gw.url, alias, { stream, timeoutMs: BOUND_MS });
  expect(res.status).toBe(200);
  expect(res.headers['x-mana-llm-resolved']).toBe('cloud/m2');
  expect(res.headers['x-mana-llm-attempts']).toBe('2');
  if (stream) expect(streamEnding(res)).toBe('done');
  const after = await gw.metrics();
  const fallbacks = (m: typeof before) => m.sum('mana_llm_fallback_total', { reason: 'response_too_large', to_model: 'cloud/m2' });
  expect(fallbacks(after) - fallbacks(before)).toBe(1);
  expect(peakRssMb).toBeLessThan(RSS_BOUND_MB);
}

/** `expectFailover` for each alias in turn, all of them within BOUND_MS. */
async function expectFailoversWithinBound(aliases: readonly string[], stream: boolean): Promise<void> {
  const started = performance.now();
  for (const alias of aliases) await expectFailover(alias, stream);
  expect(performance.now() - started).toBeLessThan(BOUND_MS);
}

describe('abusive upstreams', () => {
  it('a 429 with Retry-After 10000000000000: the alias keeps failing over, /v1/aliases answers, also after SIGHUP; the cooldown is at most 1 h', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await chat(gw.url, 'mana/limited');
      expect(res.status).toBe(200);
      expect(res.headers['x-mana-llm-resolved']).toBe('cloud/m2');
    }
    const aliases = await request(gw.url, { method: 'GET', path: '/v1/aliases', headers: { authorization: `Bearer ${CLIENT_KEY}` } });
    expect(aliases.status).toBe(200);
    gw.signal('SIGHUP');
    await gw.waitForLog((l) => l.msg === 'config reloaded');
    expect((await chat(gw.url, 'mana/limited')).status).toBe(200);
    const direct = await chat(gw.url, 'cloud/limited');
    expect(direct.status).toBe(503);
    expect(Number(direct.headers['retry-after'])).toBeLessThanOrEqual(3_600);
  });

  it('a model id that is not a header value is refused before any call, and background requests keep flowing', async () => {
    const calls = openai.count();
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEY}`, 'x-mana-llm-priority': 'background' };
    for (let i = 0; i < 4; i++) {
      const body = JSON.stringify({ model: 'cloud/ok:模型', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      const res = await request(gw.url, { body, headers, timeoutMs: BOUND_MS });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error.code).toBe('invalid_model');
    }
    expect(openai.count()).toBe(calls);
    // background_concurrency is 2: a leaked slot per bad request would make these wait forever.
    for (let i = 0; i < 3; i++) {
      const body = JSON.stringify({ model: 'cloud/m2', stream: true, messages: [{ role: 'user', content: 'hi' }] });
      const res = await request(gw.url, { body, headers, timeoutMs: 5_000 });
      expect(res.status).toBe(200);
    }
  });

  it('a 300 MB answer (max_response_bytes 1mb) fails over at once; a 64 MB one fails over at the 32 MiB default', async () => {
    await expectFailoversWithinBound(['mana/huge-tight', 'mana/huge-default'], false);
  });

  it('a 300 MB error body is read only up to max_error_body_bytes (16kb; default 64kb) and answered as a parseable OpenAI error', async () => {
    for (const [alias, limit] of [
      ['mana/error-tight', 16 * 1024],
      ['mana/error-default', 64 * 1024],
    ] as const) {
      const res = await chat(gw.url, alias, { timeoutMs: BOUND_MS });
      expect(res.status).toBe(400);
      expect(res.headers['x-mana-llm-resolved']).toBe(alias === 'mana/error-tight' ? 'tight/huge-400' : 'cloud/huge-400');
      expect(Buffer.byteLength(res.body)).toBeLessThanOrEqual(limit);
      // Cut at the bound, the upstream's JSON no longer parses: it is wrapped (status kept) so clients can read it.
      expect(JSON.parse(res.body).error).toMatchObject({ code: 'upstream_error', type: 'invalid_request_error' });
    }
    expect(peakRssMb).toBeLessThan(RSS_BOUND_MB);
  });

  it('endless role-only chunks fail over at max_pre_commit_bytes (256kb; default 1mb), long before the first-byte timeout', async () => {
    await expectFailoversWithinBound(['mana/roles-tight', 'mana/roles-default'], true);
  });

  it('an endless stream line fails over at max_stream_event_bytes (SSE and NDJSON; default 4mb), and /healthz stays responsive meanwhile', async () => {
    let slowestHealthMs = 0;
    let running = true;
    const probing = (async () => {
      while (running) {
        const res = await request(gw.url, { method: 'GET', path: '/healthz' });
        expect(res.status).toBe(200);
        slowestHealthMs = Math.max(slowestHealthMs, res.ms);
      }
    })();
    try {
      await expectFailover('mana/line-tight', true);
      await expectFailover('mana/line-ollama', true);
      await expectFailover('mana/line-default', true);
    } finally {
      running = false;
      await probing;
    }
    expect(slowestHealthMs).toBeLessThan(500);
  });

  it(`the gateway's RSS stayed under ${RSS_BOUND_MB} MB through every case, and nothing is left in flight`, async () => {
    console.log(`peak gateway RSS ${peakRssMb.toFixed(0)} MB`);
    expect(peakRssMb).toBeGreaterThan(0);
    expect(peakRssMb).toBeLessThan(RSS_BOUND_MB);
    const metrics = await gw.metrics();
    expect(metrics.sum('mana_llm_in_flight_requests')).toBe(0);
  });
});
