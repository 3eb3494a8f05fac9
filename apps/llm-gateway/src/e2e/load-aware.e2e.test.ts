/**
 * A local GPU that is up but busy never holds a realtime user: with
 * `max_concurrency: 2` on it, requests beyond two spill to the cloud at once
 * (seen by the official OpenAI client as answers from the cloud), the spill is
 * visible on /v1/aliases while the box is full, and a stream that stalls after
 * its first tokens ends with an error within `stream_idle_timeout`. Each
 * target's recent time to first token shows on /v1/aliases, /v1/health and
 * /metrics.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const WORK_MS = 3_000;
const FIRST_TOKEN_MS = 400;
const BATCH_MS = 300;
let gpu: FakeUpstream;
let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  [gpu, cloud] = await Promise.all([startFakeOpenAI({ name: 'gpu' }), startFakeOpenAI({ name: 'cloud' })]);
  gpu.on('m', { kind: 'answer', headerDelayMs: WORK_MS, chunks: 2 });
  gpu.on('batch', { kind: 'answer', headerDelayMs: BATCH_MS });
  gpu.on('thinks', { kind: 'answer', headerDelayMs: FIRST_TOKEN_MS });
  gpu.on('stalls', { kind: 'answer', content: 'one two three', chunks: 3, chunkIntervalMs: 30_000 });
  const config =
    `settings: { probe_interval: 1h, stream_idle_timeout: 500ms }\n` +
    `providers:\n` +
    `  gpu: { type: openai, base_url: "${gpu.baseUrl}", api_key_required: false, max_concurrency: 2 }\n` +
    // The cloud has a price: background work waits for the free local box rather than spend it.
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false, price: { input: 1, output: 2 } }\n` +
    `background_concurrency: 10\n` +
    aliasesYaml(
      { 'mana/fast-text': ['gpu/m', 'cloud/m'], 'mana/long-form': ['gpu/stalls'], 'mana/reasoning': ['gpu/thinks'], 'mana/structured': ['gpu/batch', 'cloud/m'] },
      ['cloud/m'],
    );
  gw = await spawnGateway({ config });
});

afterAll(async () => {
  await gw?.stop();
  await Promise.all([gpu?.close(), cloud?.close()]);
});

describe('a saturated local GPU', () => {
  it('spills realtime requests beyond max_concurrency to the cloud at once (stream and not), and shows the box full', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const onGpu = [0, 1].map(() => client.chat.completions.create({ model: 'mana/fast-text', messages }));
    await gpu.waitForRequest((q) => q.model === 'm');
    while (gpu.requests.filter((q) => q.model === 'm').length < 2) await new Promise((resolve) => setTimeout(resolve, 10));

    const view: Json = await (await fetch(`${gw.url}/v1/aliases`)).json();
    const target = view.data.find((a: Json) => a.alias === 'mana/fast-text').chain[0];
    expect(target.load).toEqual({ counts: 'provider', in_flight: 2, limit: 2, queued: 0, saturated: true });
    expect(await (await fetch(`${gw.url}/metrics`)).text()).toContain('mana_llm_target_in_flight{target="gpu/m"} 2');

    const started = Date.now();
    const plain = await client.chat.completions.create({ model: 'mana/fast-text', messages });
    expect(plain.choices[0]!.message.content).toContain('via cloud');
    let streamed = '';
    for await (const chunk of await client.chat.completions.create({ model: 'mana/fast-text', messages, stream: true })) {
      streamed += chunk.choices[0]?.delta.content ?? '';
    }
    expect(streamed).toContain('via cloud');
    expect(Date.now() - started).toBeLessThan(WORK_MS); // neither waited behind the box

    for (const answer of await Promise.all(onGpu)) expect(answer.choices[0]!.message.content).toContain('via gpu');
    expect(gpu.requests.filter((q) => q.model === 'm')).toHaveLength(2);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('mana_llm_spills_total{alias="mana/fast-text",from="gpu/m",to="cloud/m",reason="saturated"} 2');
    expect(metrics).toContain('mana_llm_target_in_flight{target="gpu/m"} 0');
  });

  it('ends a stream that stalls after its first tokens with an error event within stream_idle_timeout', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'mana/long-form', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const started = Date.now();
    const error = await (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(text.length).toBeGreaterThan(0); // the first tokens arrived
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/stream_idle_timeout|stream/);
    expect(Date.now() - started).toBeLessThan(3_000); // not the 30 s of the stall
    await gpu.waitForClientClose(2_000, (q) => q.model === 'stalls');
  });

  it('shows a target\'s recent time to first token (streams) on /v1/aliases, /v1/health and as a histogram per target', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const before: Json = await (await fetch(`${gw.url}/v1/aliases`)).json();
    expect(before.data.find((a: Json) => a.alias === 'mana/reasoning').chain[0].first_token_ms).toBeNull();
    for (let i = 0; i < 2; i++) {
      const stream = await client.chat.completions.create({ model: 'mana/reasoning', messages: [{ role: 'user', content: 'hi' }], stream: true });
      for await (const _ of stream);
    }
    await client.chat.completions.create({ model: 'mana/reasoning', messages: [{ role: 'user', content: 'hi' }] }); // a whole answer does not count

    const view: Json = await (await fetch(`${gw.url}/v1/aliases`)).json();
    const recent = view.data.find((a: Json) => a.alias === 'mana/reasoning').chain[0].first_token_ms;
    expect(recent).toBeGreaterThanOrEqual(FIRST_TOKEN_MS);
    expect(recent).toBeLessThan(FIRST_TOKEN_MS * 5);
    const health: Json = await (await fetch(`${gw.url}/v1/health`)).json();
    expect(health.targets.find((t: Json) => t.target === 'gpu/thinks')).toMatchObject({ state: 'healthy', first_token_ms: recent });
    expect(health.targets.find((t: Json) => t.target === 'gpu/m')).toMatchObject({ load: { limit: 2, saturated: false } });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toContain('mana_llm_time_to_first_token_seconds_count{target="gpu/thinks"} 2');
    expect(metrics).toMatch(/mana_llm_time_to_first_token_seconds_bucket\{le="0\.25",target="gpu\/thinks"\} 0/);
  });

  it('background requests on the saturated box wait for it and are all answered by it, none spilled to the cloud', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-mana-llm-priority': 'background' } });
    const cloudBefore = cloud.requests.length;
    const started = Date.now();
    const answers = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        i % 2 === 1
          ? client.chat.completions.create({ model: 'mana/structured', messages: [{ role: 'user', content: `item ${i}` }], stream: true }).withResponse().then(async ({ data, response }) => {
              for await (const _ of data);
              return response;
            })
          : client.chat.completions.create({ model: 'mana/structured', messages: [{ role: 'user', content: `item ${i}` }] }).withResponse().then(({ response }) => response),
      ),
    );
    for (const response of answers) expect(response.headers.get('x-mana-llm-resolved')).toBe('gpu/batch');
    expect(cloud.requests.length).toBe(cloudBefore);
    expect(gpu.requests.filter((q) => q.model === 'batch')).toHaveLength(6);
    // Two at a time (max_concurrency: 2): three rounds of the box's work, so they did wait for it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(BATCH_MS * 3);
  });
});
