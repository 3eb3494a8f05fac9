import { startFakeAnthropic, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import type { ChatRequestBody, JsonResult, RouterRequest, StreamResult } from '../types.js';

const KEY = 'sk-ant-router-test-0123456789';

let claude: FakeUpstream;
let router: Router;

/** `mana/reasoning` → the built-in anthropic provider on the fake, its key from ANTHROPIC_API_KEY as in production. */
function anthropicRouter(): Router {
  const config = parseConfig(
    `providers:
  anthropic: { base_url: "${claude.url}" }
aliases:
  mana/reasoning: [anthropic/claude-sonnet-4-5]
${otherAliases('mana/reasoning')}`,
    { env: { ANTHROPIC_API_KEY: KEY } },
  );
  return createRouter({ config });
}

beforeAll(async () => {
  claude = await startFakeAnthropic({ apiKey: KEY, models: ['claude-sonnet-4-5'] });
  router = anthropicRouter();
});
afterAll(async () => {
  await router.close();
  await claude.close();
});
afterEach(() => claude.reset());

const ask = (body: Partial<ChatRequestBody>, extra: { clientHeaders?: Record<string, string> } = {}) =>
  router.execute({ model: 'mana/reasoning', body: { messages: [{ role: 'user', content: 'hi' }], ...body }, stream: false, ...extra }) as Promise<JsonResult>;

const askStream = (body: Partial<ChatRequestBody>) =>
  router.execute({ model: 'mana/reasoning', body: { messages: [{ role: 'user', content: 'hi' }], stream: true, ...body }, stream: true }) as Promise<StreamResult>;

interface ToolCallDelta {
  index: number;
  id?: string;
  type?: string;
  function: { name?: string; arguments: string };
}
interface Delta {
  role?: string;
  content?: string;
  reasoning_content?: string;
  tool_calls?: ToolCallDelta[];
}
/** A `chat.completion.chunk` as the router yields it. */
interface Chunk {
  id: string;
  object: string;
  model: string;
  choices: Array<{ index: number; delta: Delta; logprobs: null; finish_reason: string | null }>;
  usage?: Record<string, unknown>;
}

async function chunks(result: StreamResult): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const data of result.events) out.push(JSON.parse(data) as Chunk);
  return out;
}

const deltasOf = (events: Chunk[]): Delta[] => events.flatMap((c) => c.choices.map((choice) => choice.delta));

const weather = { type: 'function', function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

describe('a chat completion to an anthropic target is a Messages request', () => {
  it('sends the key in x-api-key with anthropic-version, never as Authorization', async () => {
    await ask({});
    const sent = claude.requests[0]!;
    expect(sent.method).toBe('POST');
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['anthropic-beta']).toBeUndefined();
  });

  it("passes the client's anthropic-beta header on as it came, and no other client header", async () => {
    await ask({}, { clientHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31,context-1m-2025-08-07', 'x-other': 'kept home' } });
    expect(claude.requests[0]!.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31,context-1m-2025-08-07');
    // Only the headers the protocol takes from a client leave; the others stay home.
    expect(claude.requests[0]!.headers['x-other']).toBeUndefined();
  });

  it('translates system, images, tool calls, tool results and sampling; max_tokens defaults to 4096', async () => {
    await ask({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.', cache_control: { type: 'ephemeral' } }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here and there?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/map.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
            { id: 'toolu_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_a', content: '4 °C' },
        { role: 'tool', tool_call_id: 'toolu_b', content: [{ type: 'text', text: '21 °C' }] },
        { role: 'user', content: 'Compare them.' },
      ],
      tools: [weather],
      tool_choice: 'required',
      parallel_tool_calls: false,
      stop: 'END',
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      user: 'user-42',
    });
    expect(claude.requests[0]!.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Use metric units.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather here and there?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/map.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_a', name: 'weather', input: { city: 'Oslo' } },
            { type: 'tool_use', id: 'toolu_b', name: 'weather', input: { city: 'Rome' } },
          ],
        },
        // Both results and the next user message are one user turn, right after the tool_use turn.
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: '4 °C' },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: '21 °C' }] },
            { type: 'text', text: 'Compare them.' },
          ],
        },
      ],
      tools: [{ name: 'weather', description: 'Weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'user-42' },
    });
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['none', { type: 'none' }],
    [{ type: 'function', function: { name: 'weather' } }, { type: 'tool', name: 'weather' }],
  ])('tool_choice %j becomes %j', async (choice, expected) => {
    await ask({ tools: [weather], tool_choice: choice });
    expect((claude.requests[0]!.body as Record<string, unknown>).tool_choice).toEqual(expected);
  });

  it("keeps the client's max_completion_tokens (or max_tokens), thinking and cache_control", async () => {
    await ask({
      max_completion_tokens: 900,
      max_tokens: 100,
      thinking: { type: 'enabled', budget_tokens: 512 },
      messages: [{ role: 'user', content: 'A long document…', cache_control: { type: 'ephemeral' } }],
    });
    expect(claude.requests[0]!.body).toMatchObject({
      max_tokens: 900,
      thinking: { type: 'enabled', budget_tokens: 512 },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'A long document…', cache_control: { type: 'ephemeral' } }] }],
    });
    await ask({ thinking: { type: 'enabled', budget_tokens: 2000 } });
    // Without a client max_tokens the thinking budget must fit below the default.
    expect(claude.requests[1]!.body).toMatchObject({ max_tokens: 2000 + 4096 });
  });
});

describe('the Messages answer comes back as an OpenAI chat.completion', () => {
  it('text and tool calls (id, name, arguments as a JSON string); finish_reason tool_calls; usage with cache tokens', async () => {
    claude.on('claude-sonnet-4-5', {
      kind: 'answer',
      content: 'Checking.',
      toolCalls: [{ id: 'toolu_1', function: { name: 'weather', arguments: { city: 'Oslo' } } }],
      usage: { prompt_tokens: 12, completion_tokens: 30, cache_read_tokens: 1000, cache_creation_tokens: 200 },
    });
    const result = await ask({ tools: [weather] });
    expect(result.text).toBeUndefined();
    expect(result.body).toMatchObject({
      id: expect.stringMatching(/^msg_/),
      object: 'chat.completion',
      model: 'claude-sonnet-4-5',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: 'Checking.',
            refusal: null,
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
          },
        },
      ],
      // prompt = uncached input + cache reads + cache writes; cached_tokens = the reads.
      usage: { prompt_tokens: 1212, completion_tokens: 30, total_tokens: 1242, prompt_tokens_details: { cached_tokens: 1000 } },
    });
    expect(result.usage).toEqual({ prompt_tokens: 1212, completion_tokens: 30, total_tokens: 1242, cached_tokens: 1000 });
  });

  it('a tool-only answer has null content; thinking becomes reasoning_content', async () => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', thinking: 'The user wants Oslo.', toolCalls: [{ id: 'toolu_2', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] });
    const result = await ask({ tools: [weather] });
    expect(result.body).toMatchObject({ choices: [{ message: { content: null, reasoning_content: 'The user wants Oslo.' } }] });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
    ['model_context_window_exceeded', 'length'],
  ])('stop_reason %s is finish_reason %s', async (stopReason, finishReason) => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'Some text', finishReason: stopReason });
    const result = await ask({});
    expect(result.body).toMatchObject({ choices: [{ finish_reason: finishReason, message: { content: 'Some text' } }] });
  });
});

describe('Anthropic streams become chat.completion.chunk events', () => {
  it('text then two tool calls: one index per call in order, arguments in pieces, finish and usage at the end', async () => {
    claude.on('claude-sonnet-4-5', {
      kind: 'answer',
      content: 'Let me check both.',
      chunks: 3,
      toolCalls: [
        { id: 'toolu_o', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
        { id: 'toolu_r', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 40, cache_read_tokens: 5 },
    });
    const result = await askStream({ tools: [weather] });
    const events = await chunks(result);
    expect(claude.requests[0]!.body).toMatchObject({ stream: true, max_tokens: 4096 });
    expect(events.every((c) => c.object === 'chat.completion.chunk' && c.model === 'claude-sonnet-4-5' && c.id === events[0]!.id)).toBe(true);
    expect(events[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const deltas = deltasOf(events);
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Let me check both.');
    // Block indexes 1 and 2 upstream (the text is block 0) are tool calls 0 and 1 here.
    const calls = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(calls.filter((c) => c.id !== undefined)).toEqual([
      { index: 0, id: 'toolu_o', type: 'function', function: { name: 'weather', arguments: '' } },
      { index: 1, id: 'toolu_r', type: 'function', function: { name: 'weather', arguments: '' } },
    ]);
    const args = (i: number) => calls.filter((c) => c.index === i).map((c) => c.function.arguments).join('');
    expect([args(0), args(1)]).toEqual(['{"city":"Oslo"}', '{"city":"Rome"}']);
    expect(events.at(-1)!.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]);
    // The client did not ask for usage: recorded, not relayed.
    expect(events.some((c) => c.usage !== undefined)).toBe(false);
    expect(result.usage).toEqual({ prompt_tokens: 25, completion_tokens: 40, total_tokens: 65, cached_tokens: 5 });
  });

  it('with stream_options.include_usage the last chunk carries the usage, choices empty', async () => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'hello', usage: { prompt_tokens: 7, completion_tokens: 2 } });
    const events = await chunks(await askStream({ stream_options: { include_usage: true } }));
    expect(events.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9, prompt_tokens_details: { cached_tokens: 0 } } });
    expect(claude.requests[0]!.body).not.toHaveProperty('stream_options');
  });

  it('thinking deltas are reasoning_content deltas', async () => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', thinking: 'Think first.', content: 'Done.' });
    const deltas = deltasOf(await chunks(await askStream({})));
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('Think first.');
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Done.');
  });

  it('a stream cut after its first delta ends with stream_interrupted, never a clean end', async () => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'abcdef', chunks: 3, cutAfterChunks: 1 });
    const result = await askStream({});
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const data of result.events) seen.push(data);
      })(),
    ).rejects.toMatchObject({ code: 'stream_interrupted' });
    expect(deltasOf(seen.map((d) => JSON.parse(d) as Chunk)).map((d) => d.content ?? '').join('')).toBe('ab');
  });

  it('an error event after the first delta ends the stream with stream_interrupted', async () => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'abcdef', chunks: 3, errorEventAfterChunks: 1 });
    const result = await askStream({});
    await expect(chunks(result)).rejects.toMatchObject({ code: 'stream_interrupted' });
  });
});

describe("a request written in Anthropic's protocol goes natively", () => {
  /** The router's request for a Messages body: its (minimal) translation, and the client's request as written, its text with the span of `model`. */
  function messagesRequest(native: Record<string, unknown>, stream: boolean): RouterRequest {
    const text = JSON.stringify(native);
    const modelStart = text.indexOf('"mana/reasoning"');
    return {
      model: 'mana/reasoning',
      body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 64, stream },
      original: { protocol: 'anthropic', body: native, bodyText: { text, modelStart, modelEnd: modelStart + '"mana/reasoning"'.length } },
      stream,
      clientHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31' },
    };
  }
  const NATIVE = {
    model: 'mana/reasoning',
    max_tokens: 64,
    system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A memo.' } }, { type: 'text', text: 'Sum it up.' }] }],
    thinking: { type: 'enabled', budget_tokens: 1024 },
    tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
  };

  it("sends the client's body with only model replaced; the answer is Anthropic's message as written, its usage read", async () => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'A memo, summed up.', thinking: 'Short.', usage: { prompt_tokens: 12, completion_tokens: 5, cache_read_tokens: 30 } });
    const result = (await router.execute(messagesRequest(NATIVE, false))) as JsonResult;
    const sent = claude.requests.at(-1)!;
    expect(sent.body).toEqual({ ...NATIVE, model: 'claude-sonnet-4-5' });
    expect(sent.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31');
    expect(result.protocol).toBe('anthropic');
    expect(result.body).toMatchObject({ type: 'message', model: 'claude-sonnet-4-5', content: [{ type: 'thinking', thinking: 'Short.' }, { type: 'text', text: 'A memo, summed up.' }] });
    expect(JSON.parse(result.text!)).toEqual(result.body);
    expect(result.usage).toEqual({ prompt_tokens: 42, completion_tokens: 5, total_tokens: 47, cached_tokens: 30 });
  });

  it("streams Anthropic's own events, message_stop included; the usage is read from them", async () => {
    claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'abcdef', chunks: 3, usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const result = (await router.execute(messagesRequest({ ...NATIVE, stream: true }, true))) as StreamResult;
    expect(claude.requests.at(-1)!.body).toEqual({ ...NATIVE, stream: true, model: 'claude-sonnet-4-5' });
    expect(result.protocol).toBe('anthropic');
    const types: string[] = [];
    for await (const data of result.events) types.push((JSON.parse(data) as { type: string }).type);
    expect(types).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    // The fake reports its cache counts as 0: none read.
    expect(result.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15, cached_tokens: 0 });
  });

  it('a request without an original never goes natively', async () => {
    const result = await ask({});
    expect(result.protocol).toBe('openai');
    expect(result.body).toMatchObject({ object: 'chat.completion' });
  });
});

describe('health probe', () => {
  it('is GET /v1/models with the key (no tokens spent); a refused key makes the provider unhealthy', async () => {
    // A router of its own: this one's provider ends unhealthy.
    const router = anthropicRouter();
    await router.probeNow();
    const probe = claude.probes[0]!;
    expect(probe.path).toBe('/v1/models');
    expect(probe.query).toBe('?limit=1000');
    expect(probe.headers['x-api-key']).toBe(KEY);
    expect(probe.headers['anthropic-version']).toBe('2023-06-01');
    expect(router.health().find((h) => h.provider === 'anthropic')).toMatchObject({ type: 'anthropic', configured: true, healthy: true });

    claude.setProbeStatus(401);
    await router.probeNow();
    await router.probeNow();
    const view = router.health().find((h) => h.provider === 'anthropic')!;
    expect(view).toMatchObject({ healthy: false, lastError: expect.stringContaining('401') });
    expect(JSON.stringify(router.health())).not.toContain(KEY);
    await router.close();
  });
});
