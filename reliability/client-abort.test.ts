/**
 * Client abort: a client that goes away must take its upstream request with it
 * (the upstream sees the close within 100 ms) — before the upstream answered,
 * while it delays its headers, and in the middle of a stream — and nothing may
 * count or log the request as a success.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import {
  CLIENT_KEY,
  PROFILE,
  PROVIDER_KEY_VARS,
  chat,
  configYaml,
  finishSuite,
  requestLogs,
  sleep,
  startGateway,
  type GatewayProcess,
} from './harness.js';

const CLOSE_BOUND_MS = 100;
const TRIALS = PROFILE === 'full' ? 20 : 5;

let gateway: GatewayProcess;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeOpenAI({ name: 'slowpoke' });
  fake.on('hang', { kind: 'hang' });
  fake.on('late', { kind: 'answer', headerDelayMs: 10_000 });
  fake.on('trickle', { kind: 'answer', content: 'word '.repeat(50).trim(), chunks: 50, chunkIntervalMs: 100 });
  gateway = await startGateway({
    config: configYaml({
      settings: { first_byte_timeout: '30s' },
      providers: { slowpoke: { url: fake.baseUrl, key: PROVIDER_KEY_VARS[0] } },
      aliases: {
        'mana/abort-hang': ['slowpoke/hang'],
        'mana/abort-late': ['slowpoke/late'],
        'mana/abort-trickle': ['slowpoke/trickle'],
      },
      defaultChain: ['slowpoke/ok'],
    }),
  });
});

afterAll(() => finishSuite(gateway, [fake]));

interface Case {
  name: string;
  model: string;
  alias: string;
  stream: boolean;
  /** Abort once the client has received a body byte (mid-stream), else once the upstream has the request. */
  afterFirstByte: boolean;
}

const CASES: Case[] = [
  { name: 'non-streaming, upstream not answering', model: 'hang', alias: 'mana/abort-hang', stream: false, afterFirstByte: false },
  { name: 'streaming, upstream not answering', model: 'hang', alias: 'mana/abort-hang', stream: true, afterFirstByte: false },
  { name: 'non-streaming, upstream delaying its headers', model: 'late', alias: 'mana/abort-late', stream: false, afterFirstByte: false },
  { name: 'streaming, mid-stream', model: 'trickle', alias: 'mana/abort-trickle', stream: true, afterFirstByte: true },
];

/** Sends a request, aborts it at the right moment; resolves with how long the upstream took to see the close. */
async function abortOnce(c: Case, requestId: string): Promise<number> {
  const { hostname, port } = new URL(gateway.url);
  const body = JSON.stringify({ model: c.alias, stream: c.stream, messages: [{ role: 'user', content: 'Take your time.' }] });
  const gotFirstByte = new Promise<void>((resolve, reject) => {
    const req = http.request(
      {
        hostname,
        port,
        method: 'POST',
        path: '/v1/chat/completions',
        agent: false,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEY}`, 'x-request-id': requestId },
      },
      (res) => {
        res.once('data', () => resolve());
        res.on('error', () => undefined);
      },
    );
    req.on('error', () => undefined);
    req.end(body);
    aborters.set(requestId, () => req.destroy());
    setTimeout(() => reject(new Error(`${requestId}: no first byte within 5 s`)), 5_000).unref();
  });
  const upstream = await fake.waitForRequest((r) => r.headers['x-request-id'] === requestId || (r.model === c.model && !seen.has(r)), 5_000);
  seen.add(upstream);
  if (c.afterFirstByte) await gotFirstByte;
  else gotFirstByte.catch(() => undefined);
  const abortedAt = Date.now();
  aborters.get(requestId)!();
  const closed = await fake.waitForClientClose(2_000, (r) => r === upstream);
  return (closed.closedAt ?? Date.now()) - abortedAt;
}
const aborters = new Map<string, () => void>();
const seen = new Set<object>();

describe('client abort', () => {
  for (const c of CASES) {
    it(`${c.name}: the upstream sees the close within ${CLOSE_BOUND_MS} ms (${TRIALS} trials)`, async () => {
      const delays: number[] = [];
      for (let i = 0; i < TRIALS; i += 1) delays.push(await abortOnce(c, `abort-${c.model}-${c.stream ? 's' : 'j'}-${i}`));
      expect(Math.max(...delays), `close seen after ${delays.join(', ')} ms`).toBeLessThanOrEqual(CLOSE_BOUND_MS);
    });
  }

  it('no metric and no log line claims an aborted request succeeded', async () => {
    // Wait for the gateway to finish its bookkeeping for the aborted requests.
    const deadline = Date.now() + 5_000;
    let m = await gateway.metrics();
    while (m.sum('mana_llm_in_flight_requests') > 0 && Date.now() < deadline) {
      await sleep(50);
      m = await gateway.metrics();
    }
    expect(m.sum('mana_llm_in_flight_requests')).toBe(0);
    const total = CASES.length * TRIALS;
    expect(m.sum('mana_llm_requests_total', { status: '200' })).toBe(0);
    expect(m.sum('mana_llm_requests_total', { status: '499' })).toBe(total);
    expect(m.sum('mana_llm_alias_resolved_total')).toBe(0);
    // An attempt is "ok" once the target has answered up to the stream's first
    // delta (the commit); a stream the client left after that keeps its ok
    // attempt — the target did answer — while the request itself is a 499 and
    // no completion is counted as resolved. Requests aborted before any answer
    // have no ok attempt.
    const midStream = CASES.filter((c) => c.afterFirstByte).length * TRIALS;
    expect(m.sum('mana_llm_attempts_total', { outcome: 'ok' }), 'attempts counted ok').toBe(midStream);

    await sleep(200); // async log destination
    const logs = requestLogs(gateway);
    const aborted = [...logs.entries()].filter(([id]) => id.startsWith('abort-'));
    expect(aborted).toHaveLength(total);
    for (const [id, lines] of aborted) {
      expect(lines, id).toHaveLength(1);
      expect(lines[0]!.status, id).toBe(499);
      expect(lines[0]!.code, id).toBe('client_closed_request');
    }
    // And the upstream holds nothing open for them.
    expect(fake.requests.filter((r) => r.model !== 'ok').every((r) => r.closedByClient)).toBe(true);
  });

  it('the gateway serves normally afterwards', async () => {
    const r = await chat(gateway.url, 'mana/fast-text');
    expect(r.status).toBe(200);
  });
});
