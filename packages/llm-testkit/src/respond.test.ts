import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeUpstream } from './types.js';

// Each fault as a user of the fake sees it over real HTTP. Timing checks are loose bounds:
// the machine is shared and small.

let fake: FakeUpstream;
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(() => fake.close());

const chat = (body: Record<string, unknown>, init: RequestInit = {}) =>
  fetch(`${fake.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
    ...init,
  });

/** Read a body to its end or its failure, keeping what arrived. */
async function drain(res: Response): Promise<{ text: string; error: unknown }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, error: undefined };
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    return { text, error };
  }
}

const dataLines = (text: string) => text.split('\n\n').filter((b) => b.startsWith('data: '));

describe('status', () => {
  test('429 with Retry-After and the default OpenAI error body', async () => {
    fake.on('m', { kind: 'status', status: 429, headers: { 'retry-after': '7' } });
    const res = await chat({ model: 'm' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(await res.json()).toEqual({ error: { message: expect.any(String), type: 'requests', param: null, code: 'rate_limit_exceeded' } });
  });

  test('5xx with a custom body, also when the request streams', async () => {
    fake.on('m', { kind: 'status', status: 502, body: { error: { message: 'bad gateway' } } });
    const res = await chat({ model: 'm', stream: true });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ error: { message: 'bad gateway' } });
  });

  test('a string body is sent verbatim', async () => {
    fake.on('m', { kind: 'status', status: 400, body: 'plain words' });
    const res = await chat({ model: 'm' });
    expect([res.status, await res.text()]).toEqual([400, 'plain words']);
  });
});

describe('answer options', () => {
  test('extra headers are sent in both modes', async () => {
    fake.on('m', { kind: 'answer', headers: { 'x-ratelimit-remaining-requests': '0' } });
    expect((await chat({ model: 'm' })).headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect((await chat({ model: 'm', stream: true })).headers.get('x-ratelimit-remaining-requests')).toBe('0');
  });

  test('headerDelayMs delays the status line', async () => {
    fake.on('m', { kind: 'answer', headerDelayMs: 150 });
    const t0 = performance.now();
    const res = await chat({ model: 'm' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    expect(res.status).toBe(200);
  });

  test('chunkIntervalMs paces the stream (first chunk at once, then one per interval)', async () => {
    fake.on('m', { kind: 'answer', content: 'abcd', chunks: 4, chunkIntervalMs: 60 });
    const t0 = performance.now();
    const res = await chat({ model: 'm', stream: true });
    const { text } = await drain(res);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(170); // 3 intervals
    expect(dataLines(text).at(-1)).toBe('data: [DONE]');
  });

  test('cutAfterChunks: N deltas, then the connection drops with no [DONE]', async () => {
    fake.on('m', { kind: 'answer', content: 'abc', chunks: 3, cutAfterChunks: 2 });
    const { text, error } = await drain(await chat({ model: 'm', stream: true }));
    expect(error).toBeDefined();
    expect(dataLines(text)).toHaveLength(2);
    expect(text).not.toContain('[DONE]');
    expect(fake.requests[0]!.closedByClient).toBe(false);
  });

  test('cutAfterChunks also works when paced, and at 0 (headers only)', async () => {
    fake.on('m', [
      { kind: 'answer', content: 'abc', chunks: 3, chunkIntervalMs: 20, cutAfterChunks: 1 },
      { kind: 'answer', cutAfterChunks: 0 },
    ]);
    const paced = await drain(await chat({ model: 'm', stream: true }));
    expect([dataLines(paced.text).length, paced.error !== undefined]).toEqual([1, true]);
    const res = await chat({ model: 'm', stream: true });
    expect(res.status).toBe(200);
    const empty = await drain(res);
    expect([empty.text, empty.error !== undefined]).toEqual(['', true]);
  });

  test('errorEventAfterChunks: 0 sends the error before any delta, then ends cleanly', async () => {
    fake.on('m', { kind: 'answer', errorEventAfterChunks: 0 });
    const { text, error } = await drain(await chat({ model: 'm', stream: true }));
    expect(error).toBeUndefined();
    expect(dataLines(text)).toHaveLength(1);
    expect(JSON.parse(dataLines(text)[0]!.slice(6))).toMatchObject({ error: { message: expect.any(String) } });
  });

  test('errorEventAfterChunks: 2 sends two deltas then the error, no [DONE] (paced too)', async () => {
    fake.on('m', { kind: 'answer', content: 'abc', chunks: 3, errorEventAfterChunks: 2, chunkIntervalMs: 10 });
    const lines = dataLines((await drain(await chat({ model: 'm', stream: true }))).text);
    expect(lines).toHaveLength(3);
    expect(lines[2]).toContain('"error"');
  });
});

describe('other faults', () => {
  test('hang never answers; the client closing is recorded', async () => {
    fake.on('m', { kind: 'hang' });
    const started = Date.now();
    const controller = new AbortController();
    const answer = chat({ model: 'm' }, { signal: controller.signal });
    // Left only once the fake holds the request: a fixed timeout could fire before it arrived on a busy machine.
    await fake.waitForRequest(undefined, 2_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.count('m')).toBe(1); // held, not answered: nothing else came of it
    controller.abort();
    await expect(answer).rejects.toThrow();
    const closed = await fake.waitForClientClose(2_000);
    expect(closed.closedByClient).toBe(true);
    expect(closed.closedAt).toBeGreaterThanOrEqual(started);
    expect(fake.requests[0]).toBe(closed);
  });

  test('a client leaving a paced stream is recorded', async () => {
    fake.on('m', { kind: 'answer', chunks: 3, chunkIntervalMs: 1_000 });
    const controller = new AbortController();
    const res = await chat({ model: 'm', stream: true }, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    expect((await fake.waitForClientClose(2_000)).closedByClient).toBe(true);
  });

  test('a client leaving during headerDelayMs is recorded and nothing is sent after', async () => {
    fake.on('m', { kind: 'answer', headerDelayMs: 5_000 });
    const controller = new AbortController();
    const answer = chat({ model: 'm' }, { signal: controller.signal });
    await fake.waitForRequest(undefined, 2_000); // left once the fake holds it (see 'hang never answers')
    controller.abort();
    await expect(answer).rejects.toThrow();
    const closed = await fake.waitForClientClose(2_000);
    expect(closed.model).toBe('m');
  });

  test('empty_answer: content "" (non-stream); role chunk, finish, [DONE] (stream)', async () => {
    fake.on('m', { kind: 'empty_answer' });
    const body = (await (await chat({ model: 'm' })).json()) as { choices: Array<{ message: Record<string, unknown> }> };
    expect(body.choices[0]!.message.content).toBe('');
    expect(body.choices[0]!.message.tool_calls).toBeUndefined();
    const lines = dataLines(await (await chat({ model: 'm', stream: true })).text());
    expect(lines.at(-1)).toBe('data: [DONE]');
    expect(lines.join('')).not.toMatch(/"content":"[^"]/);
    expect(lines[0]).toContain('"role":"assistant"');
  });

  test('empty_stream: headers then [DONE] only; non-stream like empty_answer', async () => {
    fake.on('m', { kind: 'empty_stream' });
    const res = await chat({ model: 'm', stream: true });
    expect([res.status, await res.text()]).toEqual([200, 'data: [DONE]\n\n']);
    const body = (await (await chat({ model: 'm' })).json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]!.message.content).toBe('');
  });

  test('malformed_json: 200 whose body does not parse; stream: an unparseable data line', async () => {
    fake.on('m', { kind: 'malformed_json' });
    const res = await chat({ model: 'm' });
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
    const lines = dataLines(await (await chat({ model: 'm', stream: true })).text());
    expect(lines[0]).toBe('data: {not json');
  });

  test('destroy: the connection drops without a response', async () => {
    fake.on('m', { kind: 'destroy' });
    await expect(chat({ model: 'm' })).rejects.toThrow();
    expect(fake.count('m')).toBe(1);
    expect(fake.requests[0]!.closedByClient).toBe(false);
  });
});

describe('Ollama faults map to NDJSON', () => {
  let ollama: FakeUpstream;
  beforeEach(async () => {
    ollama = await startFakeOllama();
  });
  afterEach(() => ollama.close());
  const post = (body: Record<string, unknown>) => fetch(`${ollama.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [], ...body }) });

  test('cut after N lines, no done:true line', async () => {
    ollama.on('m', { kind: 'answer', content: 'abc', cutAfterChunks: 1 });
    const { text, error } = await drain(await post({}));
    expect(error).toBeDefined();
    expect(text.split('\n').filter(Boolean)).toHaveLength(1);
  });

  test('empty_stream is a 200 with no lines; malformed is a broken line', async () => {
    ollama.on('m', [{ kind: 'empty_stream' }, { kind: 'malformed_json' }]);
    expect(await (await post({})).text()).toBe('');
    expect(await (await post({})).text()).toBe('{not json\n');
  });

  test('empty_answer non-stream has content "" and done:true', async () => {
    ollama.on('m', { kind: 'empty_answer' });
    expect(await (await post({ stream: false })).json()).toMatchObject({ message: { content: '' }, done: true, eval_count: 0 });
  });
});
