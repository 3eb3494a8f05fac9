import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeBehavior, FakeUpstream } from './types.js';

let openai: FakeUpstream;
let ollama: FakeUpstream;
beforeAll(async () => {
  openai = await startFakeOpenAI();
  ollama = await startFakeOllama();
});
afterAll(async () => {
  await openai.close();
  await ollama.close();
});

const chat = (fake: FakeUpstream, model: string, stream: boolean, signal?: AbortSignal) =>
  fetch(`${fake.kind === 'openai' ? fake.baseUrl + '/chat/completions' : fake.url + '/api/chat'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'hi' }] }),
    signal,
  });

/** Reads at least `bytes` of a body, then leaves (aborting the request). */
async function readSome(res: Response, bytes: number, controller: AbortController): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (text.length < bytes) {
    const step = await reader.read();
    if (step.done) break;
    text += decoder.decode(step.value, { stream: true });
  }
  controller.abort();
  return text;
}

/** At least the first megabyte of an endless stream that `fake` answers `model` with, read before the client leaves. */
async function firstMegabyte(fake: FakeUpstream, model: string, behavior: FakeBehavior): Promise<string> {
  fake.on(model, behavior);
  const controller = new AbortController();
  const res = await chat(fake, model, true, controller.signal);
  return readSome(res, 1_000_000, controller);
}

describe('abusive upstream faults', () => {
  it('huge_body: a valid answer of exactly the asked size, generated as it is sent (both dialects)', async () => {
    for (const fake of [openai, ollama]) {
      fake.on('huge', { kind: 'huge_body', bytes: 3_000_000 });
      const res = await chat(fake, 'huge', false);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text.length).toBe(3_000_000);
      const body = JSON.parse(text) as { choices?: [{ message: { content: string } }]; message?: { content: string } };
      const content = body.choices?.[0].message.content ?? body.message?.content ?? '';
      expect(content).toMatch(/^a+$/);
    }
  }, 30_000); // 6 MB generated, sent and parsed: seconds, not the default 5, on a loaded 2-core machine

  it('huge_body with an error status: an error JSON of the asked size', async () => {
    openai.on('huge-400', { kind: 'huge_body', bytes: 500_000, status: 400 });
    const res = await chat(openai, 'huge-400', false);
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBe(500_000);
    expect((JSON.parse(text) as { error: { message: string } }).error.message).toMatch(/^a+$/);
  });

  it('endless_role_chunks: role-only chunks, never content, until the client leaves', async () => {
    for (const fake of [openai, ollama]) {
      const text = await firstMegabyte(fake, 'roles', { kind: 'endless_role_chunks' });
      expect(text.length).toBeGreaterThanOrEqual(1_000_000);
      const first = text.slice(0, text.indexOf('\n'));
      expect(first).toContain('"role":"assistant"');
      expect(text).not.toMatch(/"content":"[^"]/);
      await fake.waitForClientClose(2_000, (r) => r.model === 'roles');
    }
  });

  it('endless_line: one content line that never ends, until the client leaves', async () => {
    for (const fake of [openai, ollama]) {
      const text = await firstMegabyte(fake, 'line', { kind: 'endless_line' });
      expect(text.length).toBeGreaterThanOrEqual(1_000_000);
      expect(text).not.toContain('\n');
      expect(text).toContain('"content":"aaaa');
      await fake.waitForClientClose(2_000, (r) => r.model === 'line');
    }
  });
});
