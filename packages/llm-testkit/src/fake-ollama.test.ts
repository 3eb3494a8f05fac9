import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import type { FakeUpstream } from './types.js';

let fake: FakeUpstream;
beforeEach(async () => {
  fake = await startFakeOllama();
});
afterEach(() => fake.close());

const chat = (body: Record<string, unknown>) =>
  fetch(`${fake.url}/api/chat`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }) });
const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('fake Ollama upstream', () => {
  test('base URL is the root URL', () => {
    expect(fake.kind).toBe('ollama');
    expect(fake.baseUrl).toBe(fake.url);
  });

  test('streams NDJSON when `stream` is absent (Ollama default), last line done with counts', async () => {
    const res = await chat({ model: 'gemma3:12b' });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const ls = lines(await res.text());
    expect(ls.length).toBe(4);
    expect(ls.slice(0, -1).every((l) => l.done === false && l.model === 'gemma3:12b')).toBe(true);
    expect(ls.map((l) => (l.message as { content: string }).content).join('')).toBe('Hello from gemma3:12b');
    expect(ls.at(-1)).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: 10, eval_count: expect.any(Number) });
    expect(fake.requests[0]!.stream).toBe(true);
  });

  test('stream:false gives one native JSON object', async () => {
    fake.on('llama3', { kind: 'answer', content: 'hey', usage: { prompt_tokens: 5, completion_tokens: 2 } });
    const res = await chat({ model: 'llama3', stream: false });
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as { created_at: string };
    expect(body).toMatchObject({ model: 'llama3', message: { role: 'assistant', content: 'hey' }, done: true, done_reason: 'stop', prompt_eval_count: 5, eval_count: 2 });
    expect(Number.isNaN(Date.parse(body.created_at))).toBe(false);
  });

  test('tool calls carry arguments as an object', async () => {
    fake.on('m', { kind: 'answer', toolCalls: [{ function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] });
    const body = (await (await chat({ model: 'm', stream: false })).json()) as { message: { tool_calls: unknown } };
    expect(body.message.tool_calls).toEqual([{ function: { index: 0, name: 'get_weather', arguments: { city: 'Oslo' } } }]);
    const ls = lines(await (await chat({ model: 'm' })).text());
    expect(ls[0]).toMatchObject({ done: false, message: { tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] } });
  });

  test('accepts messages with images and records them', async () => {
    await (await chat({ model: 'llava', stream: false, messages: [{ role: 'user', content: 'what is this', images: ['aGVsbG8='] }] })).json();
    expect(fake.requests[0]!.body).toMatchObject({ messages: [{ images: ['aGVsbG8='] }] });
  });

  test('GET /api/tags lists models in Ollama shape; probe status override', async () => {
    fake.on('gemma3:12b', { kind: 'answer' });
    const tags = (await (await fetch(`${fake.url}/api/tags`)).json()) as { models: unknown[] };
    expect(tags.models).toEqual([expect.objectContaining({ name: 'gemma3:12b', model: 'gemma3:12b' })]);
    fake.setProbeStatus(503);
    const res = await fetch(`${fake.url}/api/tags`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: expect.any(String) });
    expect(fake.probeCount()).toBe(2);
  });

  test('status faults default to an Ollama error body', async () => {
    fake.on('missing', { kind: 'status', status: 404 });
    const res = await chat({ model: 'missing' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'model "missing" not found, try pulling it first' });
  });

  test('error event is an {"error"} line after N chunks, then a clean end', async () => {
    fake.on('m', { kind: 'answer', content: 'abc', chunks: 3, errorEventAfterChunks: 1 });
    const ls = lines(await (await chat({ model: 'm' })).text());
    expect(ls).toHaveLength(2);
    expect(ls[1]).toEqual({ error: expect.any(String) });
  });

  test('GET / answers like Ollama and is not a probe', async () => {
    expect(await (await fetch(`${fake.url}/`)).text()).toBe('Ollama is running');
    expect(fake.probeCount()).toBe(0);
  });
});
