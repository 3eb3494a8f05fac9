import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeUpstream } from './types.js';

let fake: FakeUpstream;
beforeEach(async () => {
  fake = await startFakeOpenAI({ models: ['listed-only'] });
});
afterEach(() => fake.close());

const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  fetch(`${fake.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });

/** The JSON payloads of an SSE body, with '[DONE]' kept as a string. */
const events = (text: string): unknown[] =>
  text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));

describe('fake OpenAI upstream', () => {
  test('listens on loopback and exposes /v1 as base URL', () => {
    expect(fake.kind).toBe('openai');
    expect(fake.url).toBe(`http://127.0.0.1:${fake.port}`);
    expect(fake.baseUrl).toBe(`${fake.url}/v1`);
    expect(fake.port).toBeGreaterThan(0);
  });

  test('non-stream answer is a faithful chat.completion naming the model', async () => {
    const res = await chat({ model: 'gpt-4o-mini' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as { id: string; created: number };
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from gpt-4o-mini' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(typeof body.created).toBe('number');
  });

  test('stream: chat.completion.chunk deltas that add up to the content, then [DONE]', async () => {
    fake.on('m', { kind: 'answer', content: 'one two three four', chunks: 4 });
    const res = await chat({ model: 'm', stream: true });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const evs = events(await res.text());
    expect(evs.at(-1)).toBe('[DONE]');
    const chunks = evs.slice(0, -1) as Array<{ object: string; model: string; choices: Array<{ delta: { role?: string; content?: string }; finish_reason: string | null }> }>;
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'm')).toBe(true);
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).filter((s) => s !== '');
    expect(deltas).toHaveLength(4);
    expect(deltas.join('')).toBe('one two three four');
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(JSON.stringify(chunks)).not.toContain('usage');
  });

  test('stream with include_usage ends with a usage chunk with empty choices', async () => {
    fake.on('m', { kind: 'answer', content: 'x', usage: { prompt_tokens: 7, completion_tokens: 3 } });
    const evs = events(await (await chat({ model: 'm', stream: true, stream_options: { include_usage: true } })).text());
    expect(evs.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
  });

  test('tool calls: arguments as a JSON string, finish_reason tool_calls, in both modes', async () => {
    fake.on('m', { kind: 'answer', toolCalls: [{ id: 'call_1', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] });
    const body = (await (await chat({ model: 'm' })).json()) as { choices: unknown[] };
    expect(body.choices[0]).toMatchObject({
      message: { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      finish_reason: 'tool_calls',
    });
    const evs = events(await (await chat({ model: 'm', stream: true })).text()) as Array<{ choices: Array<{ delta: Record<string, unknown> }> }>;
    expect(evs[0]).toMatchObject({ choices: [{ delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] } }] });
  });

  test('GET /v1/models lists on() models plus options.models; setModels replaces the list', async () => {
    fake.on('m1', { kind: 'answer' });
    fake.on('*', { kind: 'answer' });
    const ids = async () => ((await (await fetch(`${fake.baseUrl}/models`)).json()) as { data: Array<{ id: string; object: string }> }).data.map((d) => d.id);
    expect(await ids()).toEqual(['listed-only', 'm1']);
    fake.setModels(['only']);
    expect(await ids()).toEqual(['only']);
    expect(fake.probeCount()).toBe(2);
    expect(fake.count()).toBe(0);
  });

  test('setProbeStatus makes the listing fail until set back to 200', async () => {
    fake.setProbeStatus(503);
    const res = await fetch(`${fake.baseUrl}/models`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('server_error');
    fake.setProbeStatus(200);
    expect((await fetch(`${fake.baseUrl}/models`)).status).toBe(200);
  });

  test('records the request, including the authorization header', async () => {
    await (await chat({ model: 'm', temperature: 0 }, { authorization: 'Bearer sk-test' })).text();
    expect(fake.requests).toHaveLength(1);
    const r = fake.requests[0]!;
    expect(r).toMatchObject({ method: 'POST', path: '/v1/chat/completions', model: 'm', stream: false, closedByClient: false });
    expect(r.headers.authorization).toBe('Bearer sk-test');
    expect(r.body).toMatchObject({ model: 'm', temperature: 0 });
  });

  test('unknown paths answer 404 JSON', async () => {
    const res = await fetch(`${fake.url}/nope`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: unknown }).error).toBeDefined();
  });

  test('refusal: message.refusal with null content; a stream sends refusal deltas', async () => {
    fake.on('m', { kind: 'answer', refusal: "I can't help with that.", chunks: 2 });
    const body = (await (await chat({ model: 'm' })).json()) as { choices: { message: unknown }[] };
    expect(body.choices[0]!.message).toEqual({ role: 'assistant', content: null, refusal: "I can't help with that." });
    const chunks = events(await (await chat({ model: 'm', stream: true })).text()).slice(0, -1) as { choices: { delta: Record<string, unknown> }[] }[];
    const deltas = chunks.map((c) => c.choices[0]?.delta ?? {});
    expect(deltas.map((d) => d.refusal ?? '').join('')).toBe("I can't help with that.");
    expect(deltas.every((d) => d.content === undefined || d.content === '')).toBe(true);
  });
});
