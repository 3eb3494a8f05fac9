import { afterEach, describe, expect, test } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeUpstream } from './types.js';

let fake: FakeUpstream | undefined;
afterEach(() => fake?.close());

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', body: JSON.stringify(body) });

function decode(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

describe('fake OpenAI /v1/embeddings', () => {
  test('one vector per input, deterministic per text, usage counted', async () => {
    fake = await startFakeOpenAI();
    const res = await post(`${fake.baseUrl}/embeddings`, { model: 'text-embedding-3-small', input: ['a', 'b', 'a'] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: { index: number; embedding: number[] }[]; usage: { prompt_tokens: number; total_tokens: number } };
    expect(body.object).toBe('list');
    expect(body.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(body.data.every((d) => d.embedding.length === 8)).toBe(true);
    expect(body.data[0]!.embedding).toEqual(body.data[2]!.embedding);
    expect(body.data[0]!.embedding).not.toEqual(body.data[1]!.embedding);
    expect(body.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(fake.requests[0]).toMatchObject({ operation: 'embed', path: '/v1/embeddings', stream: false, model: 'text-embedding-3-small' });
  });

  test('encoding_format base64 carries the same float32 values; dimensions are honoured', async () => {
    fake = await startFakeOpenAI();
    const floats = (await (await post(`${fake.baseUrl}/embeddings`, { model: 'm', input: 'x', dimensions: 4 })).json()) as { data: { embedding: number[] }[] };
    const b64 = (await (await post(`${fake.baseUrl}/embeddings`, { model: 'm', input: 'x', dimensions: 4, encoding_format: 'base64' })).json()) as { data: { embedding: string }[] };
    expect(floats.data[0]!.embedding).toHaveLength(4);
    expect(decode(b64.data[0]!.embedding)).toEqual(floats.data[0]!.embedding);
  });

  test('faults: wrong count, mixed dimensions, status', async () => {
    fake = await startFakeOpenAI();
    fake.on('short', { kind: 'answer', embedding: { count: 1 } });
    fake.on('mixed', { kind: 'answer', embedding: { mixedDimensions: true } });
    fake.on('down', { kind: 'status', status: 503 });
    const short = (await (await post(`${fake.baseUrl}/embeddings`, { model: 'short', input: ['a', 'b'] })).json()) as { data: unknown[] };
    expect(short.data).toHaveLength(1);
    const mixed = (await (await post(`${fake.baseUrl}/embeddings`, { model: 'mixed', input: ['a', 'b'] })).json()) as { data: { embedding: number[] }[] };
    expect(mixed.data.map((d) => d.embedding.length)).toEqual([8, 7]);
    expect((await post(`${fake.baseUrl}/embeddings`, { model: 'down', input: 'a' })).status).toBe(503);
  });
});

describe('fake Ollama /api/embed', () => {
  test('native shape: embeddings array and prompt_eval_count', async () => {
    fake = await startFakeOllama({ name: 'node-a' });
    fake.on('nomic-embed-text', { kind: 'answer', embedding: { dimensions: 3, promptTokens: 7 } });
    const res = await post(`${fake.url}/api/embed`, { model: 'nomic-embed-text', input: ['a', 'b'] });
    const body = (await res.json()) as { model: string; embeddings: number[][]; prompt_eval_count: number };
    expect(body.model).toBe('nomic-embed-text');
    expect(body.embeddings.map((v) => v.length)).toEqual([3, 3]);
    expect(body.prompt_eval_count).toBe(7);
    expect(fake.requests[0]).toMatchObject({ operation: 'embed', path: '/api/embed', stream: false });
  });

  test('empty_answer answers no vectors; hang is recorded when the client leaves', async () => {
    fake = await startFakeOllama();
    fake.on('none', { kind: 'empty_answer' });
    const body = (await (await post(`${fake.url}/api/embed`, { model: 'none', input: 'a' })).json()) as { embeddings: unknown[] };
    expect(body.embeddings).toEqual([]);
    fake.on('slow', { kind: 'hang' });
    const controller = new AbortController();
    const pending = fetch(`${fake.url}/api/embed`, { method: 'POST', body: JSON.stringify({ model: 'slow', input: 'a' }), signal: controller.signal }).catch(() => undefined);
    await fake.waitForRequest((r) => r.model === 'slow');
    controller.abort();
    await pending;
    expect((await fake.waitForClientClose()).model).toBe('slow');
  });
});
