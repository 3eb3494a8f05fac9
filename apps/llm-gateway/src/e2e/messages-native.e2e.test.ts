/**
 * `POST /v1/messages` served by an `anthropic` target, through the built
 * gateway: the request goes upstream as the client wrote it (only `model`
 * replaced) and the answer comes back as Anthropic wrote it (only `model`
 * set to the alias), while failover, the commit rule, X-Mana-LLM-* headers
 * and the usage record stay the pipeline's. Every alias's first target is
 * dead (a refused port), or an anthropic target that is overloaded (529)
 * before an OpenAI-compatible one, which then gets the translation.
 */
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { frames, sequence } from './sse-frames.js';
import { ADMIN, storedRequest } from './usage-client.js';

const KEY = 'sk-mana-native-e2e-5b2e';
const ANTHROPIC_KEY = 'sk-ant-native-e2e-SECRET-0c7d';
const BETA = 'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';
const CLAUDE_CODE = JSON.parse(readFileSync(new URL('./fixtures/claude-code-messages.json', import.meta.url), 'utf8')) as Json;
const ANSWER = { kind: 'answer', thinking: 'I should list src.', content: 'index.ts and server.ts.', chunks: 3 } as const;
const ANSWER_USAGE = { prompt_tokens: 9, completion_tokens: 6, cache_read_tokens: 2000, cache_creation_tokens: 300 };
const WEATHER_TOOL = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

let claude: FakeUpstream;
let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  cloud = await startFakeOpenAI();
  claude.on('claude-sonnet-4-5', { ...ANSWER, usage: ANSWER_USAGE });
  claude.on('claude-busy', { kind: 'status', status: 529 });
  claude.on('claude-cut', { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 1 });
  cloud.on('m1', { kind: 'answer', content: 'Hello from m1', chunks: 2, usage: { prompt_tokens: 21, completion_tokens: 4 } });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl, `  anthropic: { base_url: "${claude.url}" }\n`) +
    aliasesYaml(
      {
        'mana/mixed': ['anthropic/claude-busy', 'cloud/m1'],
        'mana/tools': ['dead/m0', 'anthropic/claude-tools'],
        'mana/cut': ['dead/m0', 'anthropic/claude-cut'],
      },
      ['dead/m0', 'anthropic/claude-sonnet-4-5'],
    );
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY, MANA_LLM_ADMIN_KEY: ADMIN, ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([claude?.close(), cloud?.close()]);
});

function messages(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

/** Anthropic's usage as the fake reports ANSWER_USAGE: the uncached input apart from the cache reads and writes. */
const NATIVE_USAGE = { input_tokens: 9, cache_creation_input_tokens: 300, cache_read_input_tokens: 2000 };

describe("Claude Code's request through an alias whose second target is anthropic", () => {
  it('streamed: the upstream gets the body with only model replaced and the betas; the client gets its events in order, model = the alias', async () => {
    const res = await messages(CLAUDE_CODE, { 'anthropic-beta': BETA, 'x-request-id': 'native-stream-1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-sonnet-4-5');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    const all = await frames(res);

    const sent = claude.requests.at(-1)!;
    expect(sent.body).toEqual({ ...CLAUDE_CODE, model: 'claude-sonnet-4-5' });
    // The client's betas on, our key (never the client's) in x-api-key.
    expect(sent.headers['anthropic-beta']).toBe(BETA);
    expect(sent.headers['x-api-key']).toBe(ANTHROPIC_KEY);

    expect(sequence(all)).toEqual([
      'message_start',
      'content_block_start 0',
      'ping',
      'content_block_delta 0',
      'content_block_delta 0',
      'content_block_stop 0',
      'content_block_start 1',
      'content_block_delta 1',
      'content_block_delta 1',
      'content_block_delta 1',
      'content_block_stop 1',
      'message_delta',
      'message_stop',
    ]);
    // The upstream's own message: its id, and the cache counts Claude Code reads.
    expect(all[0]!.data).toEqual({
      type: 'message_start',
      message: { id: expect.stringMatching(/^msg_fake/), type: 'message', role: 'assistant', model: 'mana/reasoning', content: [], stop_reason: null, stop_sequence: null, usage: { ...NATIVE_USAGE, output_tokens: 1 } },
    });
    // The thinking block with its signature, as no translation could carry it.
    expect(all[1]!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' });
    expect(all.slice(3, 5).map((f) => f.data.delta)).toEqual([
      { type: 'thinking_delta', thinking: 'I should list src.' },
      { type: 'signature_delta', signature: 'fake-signature' },
    ]);
    expect(all.slice(7, 10).map((f) => f.data.delta.text).join('')).toBe('index.ts and server.ts.');
    expect(all[11]!.data).toEqual({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 6 } });

    expect(await storedRequest(gw, 'native-stream-1')).toMatchObject({
      api: 'messages',
      target: 'anthropic/claude-sonnet-4-5',
      status: 200,
      prompt_tokens: 9 + 300 + 2000,
      completion_tokens: 6,
      cached_tokens: 2000,
    });
  });

  it("not streamed: Anthropic's message as it came, model = the alias", async () => {
    const res = await messages({ ...CLAUDE_CODE, stream: false }, { 'anthropic-beta': BETA, 'x-request-id': 'native-json-1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-sonnet-4-5');
    expect(await res.json()).toEqual({
      id: expect.stringMatching(/^msg_fake/),
      type: 'message',
      role: 'assistant',
      model: 'mana/reasoning',
      content: [
        { type: 'thinking', thinking: 'I should list src.', signature: 'fake-signature' },
        { type: 'text', text: 'index.ts and server.ts.' },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { ...NATIVE_USAGE, output_tokens: 6 },
    });
    expect(claude.requests.at(-1)!.body).toEqual({ ...CLAUDE_CODE, stream: false, model: 'claude-sonnet-4-5' });
    expect(await storedRequest(gw, 'native-json-1')).toMatchObject({ api: 'messages', prompt_tokens: 2309, completion_tokens: 6, cached_tokens: 2000 });
  });
});

describe('one chain, both paths', () => {
  it('an anthropic target that is overloaded (529), then an OpenAI-compatible one: a translated answer, resolved to the second', async () => {
    const before = claude.count('claude-busy');
    const res = await messages({ ...CLAUDE_CODE, model: 'mana/mixed', stream: false });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(claude.count('claude-busy')).toBe(before + 1);
    expect(await res.json()).toEqual({
      id: expect.stringMatching(/^msg_(?!fake)/),
      type: 'message',
      role: 'assistant',
      model: 'mana/mixed',
      content: [{ type: 'text', text: 'Hello from m1' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 21, output_tokens: 4 },
    });
    // The OpenAI-compatible target got the translation: nothing of Anthropic's own.
    expect(JSON.stringify(cloud.requests.at(-1)!.body)).not.toMatch(/cache_control|thinking|input_schema|tool_use/);
  });

  it('streamed the same: the translated event sequence from the second target', async () => {
    const res = await messages({ ...CLAUDE_CODE, model: 'mana/mixed' });
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    const all = await frames(res);
    expect(sequence(all)).toEqual(['message_start', 'content_block_start 0', 'ping', 'content_block_delta 0', 'content_block_delta 0', 'content_block_stop 0', 'message_delta', 'message_stop']);
    expect(all[0]!.data.message).toMatchObject({ id: expect.stringMatching(/^msg_(?!fake)/), model: 'mana/mixed' });
  });
});

describe('the commit rule on a native stream', () => {
  it('a stream cut after its first delta ends with event: error, never message_stop', async () => {
    const res = await messages({ model: 'mana/cut', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'count' }] });
    expect(res.status).toBe(200);
    const all = await frames(res);
    expect(sequence(all)).toEqual(['message_start', 'content_block_start 0', 'ping', 'content_block_delta 0', 'error']);
    expect(all[3]!.data.delta).toEqual({ type: 'text_delta', text: 'one ' });
    expect(all.at(-1)!.data).toEqual({ type: 'error', error: { type: 'api_error', message: expect.any(String), code: 'stream_interrupted', attempts: expect.any(Array) } });
  });
});

describe('@anthropic-ai/sdk 1.10.0 against an anthropic target', () => {
  const client = () => new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0 });

  it('messages.create: the upstream message, the alias as model', async () => {
    const { data, response } = await client()
      .messages.create({ model: 'mana/fast-text', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Which files?' }] })
      .withResponse();
    expect(response.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-sonnet-4-5');
    expect(data).toMatchObject({
      model: 'mana/fast-text',
      content: [{ type: 'thinking', thinking: 'I should list src.', signature: 'fake-signature' }, { type: 'text', text: 'index.ts and server.ts.' }],
      stop_reason: 'end_turn',
      usage: { ...NATIVE_USAGE, output_tokens: 6 },
    });
    expect(claude.requests.at(-1)!.body).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Which files?' }] });
  });

  it('messages.stream with finalMessage(): the text in its pieces, the thinking with its signature', async () => {
    const stream = client().messages.stream({ model: 'mana/fast-text', max_tokens: 100, messages: [{ role: 'user', content: 'Which files?' }] });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const message = await stream.finalMessage();
    expect(pieces.length).toBe(3);
    expect(pieces.join('')).toBe('index.ts and server.ts.');
    expect(message).toMatchObject({
      model: 'mana/fast-text',
      content: [{ type: 'thinking', thinking: 'I should list src.', signature: 'fake-signature' }, { type: 'text', text: 'index.ts and server.ts.' }],
      stop_reason: 'end_turn',
      usage: { output_tokens: 6 },
    });
  });

  it('a tool round trip: tool_use from the upstream, the tool_result block reaches it as the SDK wrote it', async () => {
    claude.on('claude-tools', [
      { kind: 'answer', toolCalls: [{ id: 'toolu_paris', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { kind: 'answer', content: 'It is sunny in Paris.', chunks: 2 },
    ]);
    const question = { role: 'user' as const, content: 'Weather in Paris?' };
    const first = await client().messages.create({ model: 'mana/tools', max_tokens: 100, tools: [WEATHER_TOOL], messages: [question] });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([{ type: 'tool_use', id: 'toolu_paris', name: 'get_weather', input: { city: 'Paris' } }]);
    const turns = [question, { role: 'assistant' as const, content: first.content }, { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_paris', content: '22 °C, sunny' }] }];
    const second = await client().messages.stream({ model: 'mana/tools', max_tokens: 100, tools: [WEATHER_TOOL], messages: turns }).finalMessage();
    expect(second).toMatchObject({ model: 'mana/tools', content: [{ type: 'text', text: 'It is sunny in Paris.' }], stop_reason: 'end_turn' });
    expect(claude.requests.at(-1)!.body).toEqual({ model: 'claude-tools', max_tokens: 100, tools: [WEATHER_TOOL], messages: turns, stream: true });
  });
});
