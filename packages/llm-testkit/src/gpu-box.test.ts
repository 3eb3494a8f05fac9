import { afterEach, describe, expect, test } from 'vitest';
import { waitUntil } from './gateway-client.js';
import { startGpuBox, type GpuBox, type GpuBoxOptions } from './gpu-box.js';

let box: GpuBox | undefined;
afterEach(async () => {
  await box?.close();
  box = undefined;
});

async function start(options: GpuBoxOptions): Promise<GpuBox> {
  box = await startGpuBox(options);
  return box;
}

const post = (b: GpuBox, body: Record<string, unknown>, signal?: AbortSignal) =>
  fetch(`${b.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }),
    signal,
  });

/** The JSON payloads of an SSE body, with '[DONE]' kept as a string. */
const events = (text: string): unknown[] =>
  text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => block.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));

/** A streamed request: when its first byte of body came, and when it ended (ms since `t0`). */
async function timedStream(b: GpuBox, t0: number, signal?: AbortSignal): Promise<{ firstMs: number; endMs: number; text: string }> {
  const res = await post(b, { stream: true }, signal);
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let firstMs = -1;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstMs < 0) firstMs = performance.now() - t0;
    text += decoder.decode(value, { stream: true });
  }
  return { firstMs, endMs: performance.now() - t0, text };
}

const untilStats = (b: GpuBox, what: string, check: (s: ReturnType<GpuBox['stats']>) => boolean) =>
  waitUntil(what, () => Promise.resolve(check(b.stats())), 5_000);

describe('GPU box (saturated-upstream fake)', () => {
  test('answers OpenAI-shaped: models listing, non-stream with usage, stream token by token with a usage chunk', async () => {
    const b = await start({ slots: 1, prefillMs: 10, perTokenMs: 5, tokens: 4, model: 'llama3' });
    expect(b.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const models = (await (await fetch(`${b.url}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual(['llama3']);

    const json = (await (await post(b, { model: 'llama3' })).json()) as Record<string, unknown>;
    expect(json).toMatchObject({
      object: 'chat.completion',
      model: 'llama3',
      choices: [{ message: { role: 'assistant', content: 'tok0 tok1 tok2 tok3' }, finish_reason: 'stop' }],
      usage: { completion_tokens: 4 },
    });
    expect((json.usage as { prompt_tokens: number }).prompt_tokens).toBeGreaterThan(0);

    const res = await post(b, { model: 'llama3', stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const evs = events(await res.text()) as Array<{ choices: Array<{ delta: { content?: string } }>; usage?: { completion_tokens: number } }>;
    expect(evs.at(-1)).toBe('[DONE]');
    const deltas = evs.slice(0, -1).flatMap((e) => e.choices.map((c) => c.delta.content ?? '')).filter((s) => s !== '');
    expect(deltas).toEqual(['tok0', ' tok1', ' tok2', ' tok3']);
    expect(evs.at(-2)).toMatchObject({ choices: [], usage: { completion_tokens: 4 } });
    expect(b.stats()).toMatchObject({ served: 2, inFlight: 0, queued: 0, disconnects: 0 });

    const bad = await fetch(`${b.url}/chat/completions`, { method: 'POST', body: 'not json' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/JSON/);
  });

  test('holds concurrency at the slot count and queues the rest; the work takes waves', async () => {
    const work = 100 + 4 * 20; // prefill + 4 more tokens = 180 ms per request
    const b = await start({ slots: 2, prefillMs: 100, perTokenMs: 20, tokens: 5 });
    const t0 = performance.now();
    const all = Promise.all(Array.from({ length: 5 }, () => timedStream(b, t0)));
    await untilStats(b, 'two running and three queued', (s) => s.inFlight === 2 && s.queued === 3);
    const results = await all;
    expect(b.stats()).toEqual({ inFlight: 0, maxInFlight: 2, queued: 0, served: 5, disconnects: 0 });
    for (const r of results) expect(r.text).toContain('tok4');
    // Three waves of two slots: the last answer cannot end before 3 × work; the first two start at once.
    const ends = results.map((r) => r.endMs).sort((x, y) => x - y);
    expect(ends[4]!).toBeGreaterThanOrEqual(3 * work - 5);
    const firsts = results.map((r) => r.firstMs).sort((x, y) => x - y);
    expect(firsts[0]!).toBeGreaterThanOrEqual(100 - 5);
    expect(firsts[2]!).toBeGreaterThanOrEqual(work + 100 - 5);
  });

  test('serves waiting requests in arrival order', async () => {
    const b = await start({ slots: 1, prefillMs: 30, perTokenMs: 10, tokens: 3 });
    const t0 = performance.now();
    const order: number[] = [];
    const runs: Array<Promise<void>> = [];
    for (let i = 0; i < 5; i++) {
      runs.push(timedStream(b, t0).then(() => void order.push(i)));
      // The next one is sent only once this one is held (running or queued), so arrival order is known.
      await untilStats(b, `request ${i} held`, (s) => s.inFlight + s.queued + s.served === i + 1);
    }
    await Promise.all(runs);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(b.stats().maxInFlight).toBe(1);
  });

  test('a client that leaves while running frees its slot for the next in line at once', async () => {
    // Each answer holds the slot 50 + 99 × 20 ≈ 2 s.
    const b = await start({ slots: 1, prefillMs: 50, perTokenMs: 20, tokens: 100 });
    const t0 = performance.now();
    const abort = new AbortController();
    const first = post(b, { stream: true }, abort.signal);
    await untilStats(b, 'first running', (s) => s.inFlight === 1);
    const second = timedStream(b, t0);
    await untilStats(b, 'second queued', (s) => s.queued === 1);
    const res = await first; // headers come with the first token
    const leftAt = performance.now() - t0;
    abort.abort();
    await res.body?.cancel().catch(() => undefined);
    const r = await second;
    // The second's first token follows the disconnect by about one prefill, far before the first answer would have ended.
    expect(r.firstMs).toBeLessThan(leftAt + 1_000);
    expect(b.stats()).toMatchObject({ disconnects: 1, served: 1, inFlight: 0, queued: 0, maxInFlight: 1 });
  }, 20_000);

  test('a client that leaves while queued gives up its place and never holds a slot', async () => {
    // A holds the slot 1.5 s, long enough to queue B and C behind it whatever the machine's load.
    const b = await start({ slots: 1, prefillMs: 1_480, perTokenMs: 10, tokens: 3 });
    const t0 = performance.now();
    const a = timedStream(b, t0);
    await untilStats(b, 'a running', (s) => s.inFlight === 1);
    const abort = new AbortController();
    const leaving = post(b, { stream: true }, abort.signal).catch((e: unknown) => e);
    await untilStats(b, 'b queued', (s) => s.queued === 1);
    const c = timedStream(b, t0);
    await untilStats(b, 'c queued', (s) => s.queued === 2);
    abort.abort();
    await untilStats(b, 'b gone from the queue', (s) => s.queued === 1 && s.disconnects === 1);
    expect(await leaving).toBeInstanceOf(Error);
    const [ra, rc] = await Promise.all([a, c]);
    // C ran right after A: one answer's worth (1.5 s) later, not two (3 s).
    expect(rc.endMs - ra.endMs).toBeLessThan(2_300);
    expect(b.stats()).toEqual({ inFlight: 0, maxInFlight: 1, queued: 0, served: 2, disconnects: 1 });
  }, 20_000);
});
