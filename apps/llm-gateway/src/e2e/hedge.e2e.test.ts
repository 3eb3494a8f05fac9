/**
 * `hedge_after` through the built gateway, seen by the official OpenAI client:
 * a GPU that is up but gives no first token gets a second call to the cloud
 * after `hedge_after`; the cloud's answer is what the client reads (streamed
 * and not), the GPU's request is closed (its fake sees the disconnect), and
 * the log line, the usage record and `mana_llm_hedges_total` say so.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { ADMIN, storedRequest } from './usage-client.js';

const HEDGE_MS = 200;
let gpu: FakeUpstream;
let cloud: FakeUpstream;
let gw: GatewayProcess;
let client: OpenAI;
const messages = [{ role: 'user' as const, content: 'hi' }];

beforeAll(async () => {
  [gpu, cloud] = await Promise.all([startFakeOpenAI({ name: 'gpu' }), startFakeOpenAI({ name: 'cloud' })]);
  gpu.on('stuck', { kind: 'hang' }); // up, but no first token (a saturated box, a model being loaded)
  gpu.on('quick', { kind: 'answer' });
  const config =
    `settings: { probe_interval: 1h, failure_threshold: 1, hedge_after: ${HEDGE_MS}ms }\n` +
    `providers:\n` +
    `  gpu: { type: openai, base_url: "${gpu.baseUrl}", api_key_required: false }\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false, price: { input: 1, output: 2 } }\n` +
    aliasesYaml({ 'mana/fast-text': ['gpu/stuck', 'cloud/m'], 'mana/long-form': ['gpu/quick', 'cloud/m'] }, ['cloud/m']);
  gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN } });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([gpu?.close(), cloud?.close()]);
});

async function logLine(requestId: string): Promise<Json> {
  return gw.waitForLog((line) => line.msg === 'request' && line.req_id === requestId);
}

describe('hedge_after', () => {
  it('streamed: the cloud answers a GPU silent past hedge_after, the GPU request is closed', async () => {
    const started = Date.now();
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'mana/fast-text', messages, stream: true }, { headers: { 'x-request-id': 'hedge-stream-1' } })
      .withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello from m via cloud');
    expect(Date.now() - started).toBeLessThan(5_000); // the GPU never answers: only the hedge ends this request
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/m');
    expect(response.headers.get('x-mana-llm-attempts')).toBe('2');
    const closed = await gpu.waitForClientClose(5_000, (q) => q.model === 'stuck');
    expect(closed.closedByClient).toBe(true);

    const line = await logLine('hedge-stream-1');
    expect(line.hedge).toBe('won');
    expect(line.attempts.map((a: Json) => [a.target, a.outcome, a.reason])).toEqual([
      ['gpu/stuck', 'cancelled', 'hedge_lost'],
      ['cloud/m', 'ok', 'ok'],
    ]);
    const stored = await storedRequest(gw, 'hedge-stream-1');
    expect(stored.target).toBe('cloud/m');
    expect(stored.hedge).toBe('won');
    expect(stored.failovers).toBe(0); // a cancelled call is no failover: the request is not flagged as an error
    expect(stored.attempts.map((a: Json) => [a.target, a.outcome, a.reason, a.failed_over])).toEqual([
      ['gpu/stuck', 'cancelled', 'hedge_lost', false],
      ['cloud/m', 'ok', 'ok', false],
    ]);
    // The lost race left the GPU healthy (failure_threshold is 1: one counted failure would show).
    const health: Json = await (await fetch(`${gw.url}/v1/health`)).json();
    const gpuHealth = health.providers.find((p: Json) => p.provider === 'gpu');
    expect(gpuHealth.consecutive_failures).toBe(0);
  });

  it('not streamed: the first complete answer is the one returned', async () => {
    const answer = await client.chat.completions.create({ model: 'mana/fast-text', messages }, { headers: { 'x-request-id': 'hedge-json-1' } });
    expect(answer.choices[0]!.message.content).toBe('Hello from m via cloud');
    await gpu.waitForClientClose(5_000, (q) => q.model === 'stuck');
    expect((await logLine('hedge-json-1')).hedge).toBe('won');
  });

  it('a GPU that answers within hedge_after is not hedged; mana_llm_hedges_total counts each outcome by alias', async () => {
    const before = cloud.requests.length;
    const answer = await client.chat.completions.create({ model: 'mana/long-form', messages }, { headers: { 'x-request-id': 'hedge-quick-1' } });
    expect(answer.choices[0]!.message.content).toBe('Hello from quick via gpu');
    expect(cloud.requests.length).toBe(before);
    expect((await logLine('hedge-quick-1')).hedge).toBe('not_needed');
    expect((await storedRequest(gw, 'hedge-quick-1')).hedge).toBe('not_needed');

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('mana_llm_hedges_total{alias="mana/fast-text",outcome="won"} 2');
    expect(metrics).toContain('mana_llm_hedges_total{alias="mana/long-form",outcome="not_needed"} 1');
    expect(metrics).toContain('mana_llm_attempts_total{target="gpu/stuck",outcome="cancelled"} 2');
  });
});
