import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startFakeAnthropic } from './fake-anthropic.js';
import type { FakeUpstream } from './types.js';

const KEY = 'sk-ant-fake-key';

let fake: FakeUpstream;
let sdk: Anthropic;

/** The official client on the API version the fake speaks (the SDK's own default is a newer one). */
const client = (apiKey: string): Anthropic =>
  new Anthropic({ apiKey, baseURL: fake.baseUrl, maxRetries: 0, defaultHeaders: { 'anthropic-version': '2023-06-01' } });
beforeEach(async () => {
  fake = await startFakeAnthropic({ apiKey: KEY, models: ['claude-listed'] });
  // The official client, so the fake is checked against what Anthropic's own SDK parses.
  sdk = client(KEY);
});
afterEach(() => fake.close());

const HEADERS = { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
const BODY = { max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };

const post = (body: Record<string, unknown>, headers: Record<string, string> = HEADERS) =>
  fetch(`${fake.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify({ ...BODY, ...body }) });

/** The SSE body as [event name, data] pairs. */
function events(text: string): Array<[string, Record<string, unknown>]> {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [name, data] = block.split('\n');
      return [name!.slice('event: '.length), JSON.parse(data!.slice('data: '.length)) as Record<string, unknown>];
    });
}

describe('fake Anthropic upstream', () => {
  test('base URL is the root URL (clients append /v1/messages)', () => {
    expect(fake.kind).toBe('anthropic');
    expect(fake.baseUrl).toBe(fake.url);
  });

  test('messages.create: a message object with text, stop_reason and usage including cache tokens', async () => {
    fake.on('claude-a', { kind: 'answer', content: 'Hello there', usage: { prompt_tokens: 12, completion_tokens: 3, cache_read_tokens: 100, cache_creation_tokens: 7 } });
    const message = await sdk.messages.create({ model: 'claude-a', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-a',
      content: [{ type: 'text', text: 'Hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 3, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 },
    });
    expect(message.id).toMatch(/^msg_/);
    // The SDK sends its key as a bearer token; the fake takes it there as from x-api-key.
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(fake.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
  });

  test('tool calls are tool_use blocks with an input object; stop_reason tool_use', async () => {
    fake.on('claude-t', { kind: 'answer', content: 'Let me look.', toolCalls: [{ id: 'toolu_1', function: { name: 'lookup', arguments: '{"q":"Oslo"}' } }] });
    const message = await sdk.messages.create({ model: 'claude-t', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'Oslo' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  test('stream: Anthropic exact event sequence with block indexes, ping, message_delta and message_stop', async () => {
    fake.on('claude-s', { kind: 'answer', content: 'one two', chunks: 2, toolCalls: [{ id: 'toolu_9', function: { name: 'f', arguments: { a: 1 } } }] });
    const res = await post({ model: 'claude-s', stream: true });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const evs = events(await res.text());
    expect(evs.map(([name]) => name)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    // The event name is repeated as the data's `type`.
    expect(evs.every(([name, data]) => data.type === name)).toBe(true);
    expect(evs[1]![1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(evs[6]![1]).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_9', name: 'f', input: {} } });
    const partial = evs.filter(([, d]) => (d.delta as { type?: string } | undefined)?.type === 'input_json_delta').map(([, d]) => (d.delta as { partial_json: string }).partial_json);
    expect(partial.join('')).toBe('{"a":1}');
    expect(evs[10]![1]).toMatchObject({ delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: expect.any(Number) } });
  });

  test("the SDK's stream helper rebuilds the same message from the events", async () => {
    fake.on('claude-s', {
      kind: 'answer',
      thinking: 'Hmm.',
      content: 'Sunny in Oslo',
      chunks: 3,
      toolCalls: [{ id: 'toolu_2', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
      usage: { prompt_tokens: 20, completion_tokens: 9, cache_read_tokens: 5 },
    });
    const message = await sdk.messages.stream({ model: 'claude-s', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Hmm.', signature: 'fake-signature' },
      { type: 'text', text: 'Sunny in Oslo' },
      { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Oslo' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 9, cache_read_input_tokens: 5 });
  });

  test('stop_sequence answers name the sequence', async () => {
    fake.on('claude-x', { kind: 'answer', content: 'up to', finishReason: 'stop_sequence', stopSequence: 'END' });
    const message = await sdk.messages.create({ model: 'claude-x', max_tokens: 100, stop_sequences: ['END'], messages: [{ role: 'user', content: 'hi' }] });
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
  });

  test('a cut after N chunks leaves the block open with no message_stop; an error event is Anthropic-shaped', async () => {
    fake.on('claude-c', { kind: 'answer', content: 'abcdef', chunks: 3, cutAfterChunks: 1 });
    const res = await post({ model: 'claude-c', stream: true });
    const reader = res.body!.getReader();
    let received = '';
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) received += Buffer.from(r.value).toString();
    } catch {
      // the socket closed without a terminator: what a cut is
    }
    expect(events(received).map(([name]) => name)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta']);
    fake.on('claude-e', { kind: 'answer', content: 'abcdef', chunks: 3, errorEventAfterChunks: 1 });
    const evs = events(await (await post({ model: 'claude-e', stream: true })).text());
    expect(evs.map(([name]) => name)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'error']);
    expect(evs.at(-1)![1]).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  });

  test('status faults answer in Anthropic error shape: 529 overloaded, 429 with retry-after', async () => {
    fake.on('claude-o', [{ kind: 'status', status: 529 }, { kind: 'status', status: 429, headers: { 'retry-after': '7' } }]);
    const overloaded = await post({ model: 'claude-o' });
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: expect.stringMatching(/^req_/) });
    const limited = await post({ model: 'claude-o' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(await limited.json()).toMatchObject({ error: { type: 'rate_limit_error' } });
  });

  test('refuses like Anthropic: no or wrong key 401, a missing or other anthropic-version or no max_tokens 400; still recorded', async () => {
    const noKey = await post({ model: 'claude-a' }, { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    await expect(client('sk-ant-other').messages.create({ model: 'claude-a', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    const noVersion = await post({ model: 'claude-a' }, { 'content-type': 'application/json', 'x-api-key': KEY });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({ error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
    const newer = await post({ model: 'claude-a' }, { ...HEADERS, 'anthropic-version': '2026-10-21' });
    expect(newer.status).toBe(400);
    const noMax = await post({ model: 'claude-a', max_tokens: undefined });
    expect(noMax.status).toBe(400);
    expect(await noMax.json()).toMatchObject({ error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } });
    expect(fake.count('claude-a')).toBe(5);
  });

  test('refuses like Anthropic: a tool id outside ^[a-zA-Z0-9_-]+$, or two tool_use blocks with one id, is a 400', async () => {
    const turn = (useIds: string[], resultId: string) => ({
      model: 'claude-a',
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: useIds.map((id) => ({ type: 'tool_use', id, name: 'f', input: {} })) },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: resultId, content: 'sunny' }] },
      ],
    });
    const markup = await post(turn(['call<b>'], 'call<b>'));
    expect(markup.status).toBe(400);
    expect(await markup.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('messages.1.content.0.tool_use.id') } });
    const badResult = await post(turn(['ok_1'], 'ok 1'));
    expect(badResult.status).toBe(400);
    const repeated = await post(turn(['dup', 'dup'], 'dup'));
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({ error: { message: expect.stringContaining('ids must be unique') } });
    expect((await post(turn(['toolu_1', 'toolu_2'], 'toolu_1'))).status).toBe(200);
  });

  test('GET /v1/models lists models in Anthropic shape and needs the key', async () => {
    fake.on('claude-a', { kind: 'answer' });
    const page = await sdk.models.list();
    expect(page.data.map((m) => m.id)).toEqual(['claude-listed', 'claude-a']);
    expect(page.data[0]).toMatchObject({ type: 'model', display_name: 'claude-listed' });
    const anonymous = await fetch(`${fake.url}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    expect(anonymous.status).toBe(401);
    expect(fake.probeCount()).toBe(2);
    expect(fake.probes[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});
