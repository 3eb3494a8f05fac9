/**
 * Secrets: with real-looking provider keys, a client key and an admin key
 * configured, drive every path that reports something — successes, upstream
 * errors whose bodies echo the key back (as real providers do on 401), relayed
 * 4xx bodies, mid-stream error events carrying the key, connection failures,
 * /v1/health after failures, /v1/aliases, /v1/models, /metrics, admin reloads,
 * debug-level logs — and grep every response, header, log line and metric
 * for any key. (Every other file of the suite runs the same grep over what it
 * captured.)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import {
  ADMIN_KEY,
  CLIENT_KEY,
  SECRETS,
  assertNoSecrets,
  chat,
  configYaml,
  findSecrets,
  finishSuite,
  request,
  sleep,
  startGateway,
  type GatewayProcess,
} from './harness.js';

const OPENAI_KEY = SECRETS.RELIABILITY_OPENAI_KEY;
const GROQ_KEY = SECRETS.RELIABILITY_GROQ_KEY;
const OPENROUTER_KEY = SECRETS.RELIABILITY_OPENROUTER_KEY;
const HEADER_KEY = SECRETS.RELIABILITY_HEADER_KEY;

let gateway: GatewayProcess;
let leaky: FakeUpstream;
let backup: FakeUpstream;
let headered: FakeUpstream;
let echo: http.Server;
let echoUrl: string;
let echoSawAuth = '';

/** An upstream that streams one delta and then an error event quoting the Authorization header it got. */
function startEchoingStream(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const auth = String(req.headers.authorization ?? '');
      echoSawAuth = auth;
      if (req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"object":"list","data":[]}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-ratelimit-remaining-requests': '99' });
      res.write(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}\n\n`);
      res.end(`data: {"error":{"message":"Key ${auth} was revoked mid-stream","type":"invalid_request_error"}}\n\n`);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  leaky = await startFakeOpenAI({ name: 'leaky' });
  // Real providers quote (part of) the key they were given in 401 bodies.
  leaky.on('unauthorized', { kind: 'status', status: 401, body: { error: { message: `Incorrect API key provided: ${OPENAI_KEY}.` } } });
  leaky.on('bad-request', { kind: 'status', status: 400, body: { error: { message: `Bad request for key ${OPENAI_KEY}`, type: 'invalid_request_error' } } });
  leaky.on('server-error', { kind: 'status', status: 500, body: `internal error; auth header was Bearer ${OPENAI_KEY}` });
  leaky.on('rate-limited', { kind: 'status', status: 429, headers: { 'retry-after': '1', 'x-debug-key': OPENAI_KEY } });
  backup = await startFakeOpenAI({ name: 'backup' });
  // A provider whose credential travels in a header: its 400 and 500 bodies quote it, as the 401s above quote keys.
  headered = await startFakeOpenAI({ name: 'headered' });
  headered.on('bad-request', { kind: 'status', status: 400, body: { error: { message: `Bad request for x-api-key ${HEADER_KEY}`, type: 'invalid_request_error' } } });
  headered.on('server-error', { kind: 'status', status: 500, body: `internal error; x-api-key was ${HEADER_KEY}` });
  echo = await startEchoingStream();
  echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/v1`;
  gateway = await startGateway({
    env: { LOG_LEVEL: 'debug' },
    config: configYaml({
      settings: { probe_interval: '500ms', failure_threshold: 1, connect_timeout: '500ms' },
      providers: {
        leaky: { url: leaky.baseUrl, key: 'RELIABILITY_OPENAI_KEY' },
        backup: { url: backup.baseUrl, key: 'RELIABILITY_GROQ_KEY' },
        echoer: { url: echoUrl, key: 'RELIABILITY_OPENROUTER_KEY' },
        headered: { url: headered.baseUrl, headers: { 'x-api-key': '${RELIABILITY_HEADER_KEY}' } },
        gone: { url: `http://127.0.0.1:${await refusingPort()}/v1`, key: 'RELIABILITY_OPENROUTER_KEY' },
      },
      aliases: {
        'mana/fast-text': ['leaky/unauthorized', 'backup/m'],
        'mana/long-form': ['leaky/bad-request'],
        'mana/structured': ['leaky/server-error', 'gone/m'],
        'mana/reasoning': ['echoer/m'],
        'mana/vision': ['leaky/rate-limited', 'gone/m'],
        'mana/header-relayed': ['headered/bad-request'],
        'mana/header-failed': ['headered/server-error'],
      },
      defaultChain: ['backup/m'],
    }),
  });
});

// stop() captures the gateway's whole stdout/stderr: finishSuite greps everything once more.
afterAll(() => finishSuite(gateway, [leaky, backup, headered, { close: () => new Promise((resolve) => echo?.close(resolve)) }]));

describe('secrets', () => {
  it('the keys are really in use (otherwise the grep proves nothing)', async () => {
    const r = await chat(gateway.url, 'mana/fast-text');
    expect(r.status).toBe(200);
    expect(leaky.requests.at(-1)?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(backup.requests.at(-1)?.headers.authorization).toBe(`Bearer ${GROQ_KEY}`);
  });

  it('an upstream 401 quoting the key, then failover: nothing of the key in the answer', async () => {
    for (const stream of [false, true]) {
      const r = await chat(gateway.url, 'mana/fast-text', { stream });
      expect(r.status).toBe(200);
      expect(findSecrets(JSON.stringify(r.headers) + r.body)).toEqual([]);
    }
  });

  it('a relayed upstream 400 quoting the key: relayed without it', async () => {
    const r = await chat(gateway.url, 'mana/long-form');
    expect(r.status).toBe(400);
    expect(findSecrets(r.body)).toEqual([]);
  });

  it('all targets failing (500 quoting the key, connection refused; 429 with the key in a header): the 502/503 bodies carry no key', async () => {
    for (const model of ['mana/structured', 'mana/vision']) {
      for (const stream of [false, true]) {
        const r = await chat(gateway.url, model, { stream });
        expect([502, 503]).toContain(r.status);
        expect(findSecrets(JSON.stringify(r.headers) + r.body)).toEqual([]);
      }
    }
  });

  it('a credential header quoted back in a relayed 400 and in a 500: neither answer nor /v1/health carries it', async () => {
    const relayed = await chat(gateway.url, 'mana/header-relayed');
    expect(relayed.status).toBe(400);
    expect(headered.requests.at(-1)?.headers['x-api-key']).toBe(HEADER_KEY);
    expect(relayed.body).toContain('[redacted]');
    const failed = await chat(gateway.url, 'mana/header-failed');
    expect(failed.status).toBe(502);
    const health = await request(gateway.url, { method: 'GET', path: '/v1/health', headers: { authorization: `Bearer ${CLIENT_KEY}` } });
    expect(findSecrets(JSON.stringify(relayed.headers) + relayed.body + failed.body + health.body)).toEqual([]);
  });

  it('a mid-stream error event quoting the key: the client gets an error event without it', async () => {
    const r = await chat(gateway.url, 'mana/reasoning', { stream: true });
    expect(r.status).toBe(200);
    expect(r.body).toContain('"error"');
    expect(echoSawAuth).toBe(`Bearer ${OPENROUTER_KEY}`);
    expect(findSecrets(JSON.stringify(r.headers) + r.body)).toEqual([]);
  });

  it('health, aliases, models and metrics after all those failures carry no key', async () => {
    await sleep(1_200); // a probe round records probe errors too
    for (const path of ['/v1/health', '/v1/aliases', '/v1/models', '/metrics', '/healthz', '/readyz']) {
      const r = await request(gateway.url, { method: 'GET', path, headers: { authorization: `Bearer ${CLIENT_KEY}` } });
      expect(r.status, path).toBe(200);
      expect(findSecrets(r.body), path).toEqual([]);
    }
  });

  it('admin reload with a wrong, a missing and the right key: no key echoed', async () => {
    const wrong = await request(gateway.url, { path: '/admin/reload', headers: { authorization: 'Bearer mana-admin-not-the-right-one' } });
    expect([401, 403]).toContain(wrong.status);
    const missing = await request(gateway.url, { path: '/admin/reload' });
    expect([401, 403]).toContain(missing.status);
    const right = await request(gateway.url, { path: '/admin/reload', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(right.status).toBe(200);
    for (const r of [wrong, missing, right]) expect(findSecrets(JSON.stringify(r.headers) + r.body)).toEqual([]);
  });

  it('a client key sent where it does not belong is not echoed', async () => {
    const r = await request(gateway.url, {
      body: JSON.stringify({ model: CLIENT_KEY, messages: [{ role: 'user', content: 'x' }] }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(r.status).toBe(401);
    expect(findSecrets(r.body)).toEqual([]);
  });

  it('no key in any log line, even at debug level', async () => {
    await sleep(300);
    expect(gateway.logs.length).toBeGreaterThan(10);
    expect(findSecrets(gateway.output())).toEqual([]);
    const { bytes } = assertNoSecrets([gateway.output()]);
    expect(bytes).toBeGreaterThan(1_000);
  });
});
