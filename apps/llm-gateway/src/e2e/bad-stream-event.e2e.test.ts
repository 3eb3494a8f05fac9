/**
 * An upstream stream whose tenth event is not JSON, and which otherwise
 * completes normally, through the built gateway: the event is skipped and the
 * client gets the whole answer (the official SDKs' stream helpers assemble
 * it), the skip is counted in `mana_llm_upstream_bad_events_total{target}`,
 * logged once for the request, and the request's attempt record says so. A
 * stream that carries no parsable event at all still fails over.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ANTHROPIC_KEY = 'sk-ant-bad-events-0a1b2c3d';
const ANSWER = 'one two three four five six seven eight nine ten eleven twelve';

let cloud: FakeUpstream;
let claude: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  // Twelve content chunks; the tenth event on the wire is garbled.
  cloud.on('garbled', { kind: 'answer', content: ANSWER, chunks: 12, badEventAfterChunks: 9 });
  claude.on('garbled', { kind: 'answer', content: ANSWER, chunks: 12, badEventAfterChunks: 9 });
  cloud.on('nothing-parsable', { kind: 'malformed_json' });
  const config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
    `  anthropic: { base_url: "${claude.url}" }\n` +
    aliasesYaml({ 'mana/garbled': ['cloud/garbled'], 'mana/claude': ['anthropic/garbled'], 'mana/rescued': ['cloud/nothing-parsable', 'cloud/m1'] }, ['cloud/m1']);
  gw = await spawnGateway({ config, env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([cloud?.close(), claude?.close()]);
});

async function badEventsOf(target: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`mana_llm_upstream_bad_events_total{target="${target}"}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('an unparsable event in an upstream stream', () => {
  it('chat completions: skipped, the whole answer delivered, counted, logged once, in the attempt record', async () => {
    const before = await badEventsOf('cloud/garbled');
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'auth-off', maxRetries: 0 });
    const stream = client.chat.completions.stream({ model: 'mana/garbled', messages: [{ role: 'user', content: 'count' }] }, { headers: { 'x-request-id': 'garbled-chat' } });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.message.content).toBe(ANSWER);
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(await badEventsOf('cloud/garbled')).toBe(before + 1);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === 'garbled-chat');
    expect(line.status).toBe(200);
    expect(line.attempts).toEqual([expect.objectContaining({ target: 'cloud/garbled', outcome: 'ok', detail: 'skipped 1 unparsable stream event' })]);
    const warnings = gw.logs.filter((l: Json) => l.req_id === 'garbled-chat' && l.skipped_events !== undefined);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ target: 'cloud/garbled', skipped_events: 1 });
  });

  it('Messages to a native anthropic target: the whole message, the garbled event left out', async () => {
    const before = await badEventsOf('anthropic/garbled');
    const client = new Anthropic({ baseURL: gw.url, apiKey: 'auth-off', maxRetries: 0 });
    const message = await client.messages.stream({ model: 'mana/claude', max_tokens: 100, messages: [{ role: 'user', content: 'count' }] }).finalMessage();
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: ANSWER })]);
    expect(message.stop_reason).toBe('end_turn');
    expect(await badEventsOf('anthropic/garbled')).toBe(before + 1);
  });

  it('a stream with no parsable event still fails over to the next target', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'auth-off', maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'mana/rescued', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    let text = '';
    for await (const chunk of data) text += chunk.choices[0]?.delta?.content ?? '';
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(text).toBe('Hello from m1');
  });
});
