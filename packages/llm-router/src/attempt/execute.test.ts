import type { FakeUpstream } from '@mana/llm-testkit';
import { once, getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import { failure, useFakePair } from '../test-support.js';
import type { JsonResult, Priority, RouterResult, StreamResult } from '../types.js';

/** Attempt-loop behaviour that needs real sockets and real time: aborts, timeouts, retries, priorities, strategies. */

const fakes = useFakePair();
let a: FakeUpstream;
let b: FakeUpstream;
let router: Router | undefined;
const LONG_FORM = 'mana/long-form';

beforeAll(() => {
  ({ a, b } = fakes);
});

function start(alias: string, head = '', now?: () => number, extraProviders: Record<string, string> = {}): Router {
  const extra = Object.entries(extraProviders)
    .map(([name, url]) => `  ${name}: { type: openai, base_url: "${url}", api_key_required: false }\n`)
    .join('');
  const config = parseConfig(
    `${head}
providers:
  a: { type: openai, base_url: "${a.baseUrl}", api_key_required: false }
  b: { type: openai, base_url: "${b.baseUrl}", api_key_required: false }
${extra}aliases:
  ${LONG_FORM}:
${alias}
${otherAliases(LONG_FORM)}`,
    { env: {} },
  );
  router = fakes.use(createRouter(now === undefined ? { config } : { config, now }));
  return router;
}

const request = (r: Router, options: { stream?: boolean; signal?: AbortSignal; priority?: Priority } = {}): Promise<RouterResult> =>
  r.execute({
    model: LONG_FORM,
    body: { messages: [{ role: 'user', content: 'hi' }], stream: options.stream ?? false },
    stream: options.stream ?? false,
    signal: options.signal,
    priority: options.priority,
  });

/**
 * An SSE upstream that sends its headers, a role-only chunk and a keep-alive
 * comment, then nothing: the time-to-first-token hang the testkit's `answer`
 * cannot express (its first frame always carries content).
 */
async function startStalledStream(): Promise<{ baseUrl: string; closedByClient: Promise<void>; close(): Promise<void> }> {
  let closed!: () => void;
  const closedByClient = new Promise<void>((resolve) => (closed = resolve));
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const role = { id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm1', choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }] };
    res.write(`data: ${JSON.stringify(role)}\n\n: keep-alive\n\n`);
    res.on('close', closed);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    closedByClient,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** The content deltas of a stream, joined. */
async function streamText(result: StreamResult): Promise<string> {
  let text = '';
  for await (const chunk of result.events) {
    text += (JSON.parse(chunk) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '';
  }
  return text;
}

describe('cancellation', () => {
  it('an abort before the answer cancels the upstream request at once', async () => {
    a.on('m1', { kind: 'hang' });
    const r = start('    chain: [a/m1, b/m2]');
    const controller = new AbortController();
    const pending = request(r, { signal: controller.signal });
    await a.waitForRequest();
    const abortedAt = Date.now();
    controller.abort();
    const error = await failure(pending);
    expect(error.code).toBe('aborted');
    expect(error.outcome.attempts).toMatchObject([{ target: 'a/m1', outcome: 'aborted' }]);
    const closed = await a.waitForClientClose(2_000);
    expect(closed.closedByClient).toBe(true);
    expect(closed.closedAt! - abortedAt).toBeLessThan(1_000);
    expect(b.count()).toBe(0);
  });

  it('an abort mid-stream closes the upstream connection and ends iteration with aborted', async () => {
    a.on('m1', { kind: 'answer', content: 'a b c d e f', chunks: 6, chunkIntervalMs: 100 });
    const r = start('    chain: [a/m1]');
    const controller = new AbortController();
    const result = (await request(r, { stream: true, signal: controller.signal })) as StreamResult;
    const it = result.events[Symbol.asyncIterator]();
    await it.next();
    controller.abort();
    expect((await failure(it.next())).code).toBe('aborted');
    expect((await a.waitForClientClose(2_000)).closedByClient).toBe(true);
  });

  it('a consumer that stops reading closes the upstream connection', async () => {
    a.on('m1', { kind: 'answer', content: 'a b c d e f', chunks: 6, chunkIntervalMs: 100 });
    const r = start('    chain: [a/m1]');
    const result = (await request(r, { stream: true })) as StreamResult;
    for await (const _ of result.events) break;
    expect((await a.waitForClientClose(2_000)).closedByClient).toBe(true);
  });
});

describe('timeouts and retries', () => {
  // first_byte_timeout runs on a native timer per attempt (attempt/first-byte-timer.ts), so it fires
  // on time; the upper bounds (950 ms) leave room for a loaded 2-core machine (601 ms was seen at a
  // load average of 15), not for a 1 s timer wheel, which would fire a 150 ms timeout after 1–2 s.
  it('a hanging upstream is given up after first_byte_timeout, and the next target answers', async () => {
    a.on('m1', { kind: 'hang' });
    const r = start('    chain: [{ target: a/m1, settings: { first_byte_timeout: 150ms } }, b/m2]');
    const started = Date.now();
    const result = (await request(r)) as JsonResult;
    const elapsed = Date.now() - started;
    expect(result.outcome.target).toBe('b/m2');
    expect(result.outcome.attempts[0]).toMatchObject({ reason: 'first_byte_timeout', outcome: 'failed', failedOver: true });
    expect(elapsed).toBeGreaterThanOrEqual(145);
    expect(elapsed).toBeLessThan(950);
    // The abort destroys the upstream socket: the fake sees the client close it, when the request reached
    // the fake before the 150 ms ran out (under a CPU hog with every package's tests running, once it had not).
    if (a.count('m1') > 0) expect((await a.waitForClientClose(2_000)).closedByClient).toBe(true);
  });

  it('a stream whose headers do not arrive within first_byte_timeout fails over', async () => {
    a.on('m1', { kind: 'answer', headerDelayMs: 5_000 });
    const r = start('    chain: [{ target: a/m1, settings: { first_byte_timeout: 150ms } }, b/m2]');
    const started = Date.now();
    const result = (await request(r, { stream: true })) as StreamResult;
    const elapsed = Date.now() - started;
    expect(result.outcome.target).toBe('b/m2');
    expect(result.outcome.attempts[0]).toMatchObject({ reason: 'first_byte_timeout', outcome: 'failed' });
    expect(elapsed).toBeGreaterThanOrEqual(145);
    expect(elapsed).toBeLessThan(950);
    for await (const _ of result.events);
  });

  it('for a stream the first-byte clock runs until the first delta: headers and a role chunk alone do not stop it', async () => {
    const stalled = await startStalledStream();
    try {
      const r = start('    chain: [{ target: s/m1, settings: { first_byte_timeout: 150ms } }, b/m2]', '', undefined, {
        s: stalled.baseUrl,
      });
      const started = Date.now();
      const result = (await request(r, { stream: true })) as StreamResult;
      const elapsed = Date.now() - started;
      expect(result.outcome.target).toBe('b/m2');
      expect(result.outcome.attempts[0]).toMatchObject({ target: 's/m1', reason: 'first_byte_timeout', outcome: 'failed' });
      expect(elapsed).toBeGreaterThanOrEqual(145);
      expect(elapsed).toBeLessThan(950);
      expect(await streamText(result)).toBe('Hello from m2');
      await stalled.closedByClient;
    } finally {
      await stalled.close();
    }
  });

  it('once a stream has committed, a pace slower than first_byte_timeout in total is not cut', async () => {
    // The first content delta arrives one interval in (after a role-only chunk), the whole stream takes 4–5
    // intervals: 250 ms of margin for the first, and the total well past the timeout.
    a.on('m1', { kind: 'answer', content: 'one two three four', chunks: 4, chunkIntervalMs: 150 });
    const r = start('    chain: [{ target: a/m1, settings: { first_byte_timeout: 400ms } }, b/m2]');
    const result = (await request(r, { stream: true })) as StreamResult;
    expect(result.outcome.target).toBe('a/m1');
    expect(await streamText(result)).toBe('one two three four');
    expect(b.count()).toBe(0);
  });

  it('a caller signal shared by many requests keeps no listeners behind', async () => {
    a.on('m1', [{ kind: 'answer' }, { kind: 'status', status: 503 }, { kind: 'answer' }]);
    const r = start('    chain: [a/m1, b/m2]');
    const controller = new AbortController();
    await request(r, { signal: controller.signal });
    await request(r, { signal: controller.signal }); // a 503, then b
    const result = (await request(r, { stream: true, signal: controller.signal })) as StreamResult;
    for await (const _ of result.events);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('retries the same target before failing over', async () => {
    a.on('m1', [{ kind: 'status', status: 503 }, { kind: 'answer' }]);
    const r = start('    chain: [{ target: a/m1, settings: { retries: 1, retry_max_wait: 50ms } }, b/m2]');
    const result = (await request(r)) as JsonResult;
    expect(result.outcome.target).toBe('a/m1');
    expect(result.outcome.attempts.map((x) => [x.reason, x.failedOver])).toEqual([
      ['http_503', false],
      ['ok', false],
    ]);
    expect(b.count()).toBe(0);
  });

  it('a realtime request does not wait out a Retry-After; a background one does (up to retry_max_wait)', async () => {
    const alias = '    chain: [{ target: a/m1, settings: { retries: 1, retry_max_wait: 2s } }, b/m2]';
    a.on('m1', [{ kind: 'status', status: 429, headers: { 'retry-after': '0' } }, { kind: 'answer' }]);
    const realtime = (await request(start(alias))) as JsonResult;
    expect(realtime.outcome.target).toBe('b/m2');
    await router?.close();
    a.reset();
    a.on('m1', [{ kind: 'status', status: 429, headers: { 'retry-after': '0' } }, { kind: 'answer' }]);
    const background = (await request(start(alias), { priority: 'background' })) as JsonResult;
    expect(background.outcome.target).toBe('a/m1');
  });

  it('a background request waits out a short cooldown; a realtime one fails at once with Retry-After', async () => {
    a.on('m1', [{ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { kind: 'answer' }]);
    const r = start('    chain: [a/m1]', 'settings: { retry_max_wait: 3s }');
    expect((await failure(request(r))).code).toBe('upstream_failed');
    const realtime = await failure(request(r));
    expect(realtime).toMatchObject({ code: 'no_healthy_provider', outcome: { retryAfterSeconds: 1 } });
    const started = Date.now();
    const background = (await request(r, { priority: 'background' })) as JsonResult;
    expect(background.outcome.target).toBe('a/m1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });
});

describe('no_healthy_provider', () => {
  it('Retry-After is when the first skipped target becomes usable: the later of its blocks, the soonest of the targets', async () => {
    let now = Date.UTC(2026, 0, 1);
    const r = start('    chain: [a/m1, b/m2]', 'settings: { failure_threshold: 1, unhealthy_period: 60s }', () => now);
    a.on('m1', { kind: 'status', status: 429, headers: { 'retry-after': '120' } }); // a/m1 cools down for 120 s
    b.on('m2', { kind: 'status', status: 503, headers: { 'retry-after': '100' } }); // b/m2 for 100 s
    a.on('m3', { kind: 'destroy' }); // a connection-level failure: provider a unhealthy for 60 s
    expect((await failure(request(r))).code).toBe('upstream_failed');
    await failure(r.execute({ model: 'a/m3', body: { messages: [{ role: 'user', content: 'hi' }] }, stream: false }));
    now += 1_000;
    const error = await failure(request(r));
    expect(error.code).toBe('no_healthy_provider');
    expect(error.outcome.attempts).toMatchObject([
      { target: 'a/m1', outcome: 'skipped', reason: 'unhealthy' }, // usable again in 119 s, not 59 s
      { target: 'b/m2', outcome: 'skipped', reason: 'cooling_down' }, // in 99 s
    ]);
    expect(error.outcome.retryAfterSeconds).toBe(99);
    expect(a.count('m1') + b.count('m2')).toBe(2);
  });
});

describe('priority and strategies', () => {
  it('background requests pass the concurrency limit; realtime ones bypass it', async () => {
    a.on('m1', { kind: 'answer', headerDelayMs: 300 });
    const r = start('    chain: [a/m1]', 'background_concurrency: 1');
    const answered: string[] = [];
    const first = request(r, { priority: 'background' }).then(() => answered.push('first'));
    await a.waitForRequest(); // the first holds the only background slot
    const second = request(r, { priority: 'background' });
    const realtime = request(r);
    await a.waitForRequest(); // one more arrives at once: the realtime request, past the gate
    expect(answered).toEqual([]);
    await a.waitForRequest(); // the next arrival is the second background request, let in only once the first is answered
    expect(answered).toEqual(['first']);
    await Promise.all([first, second, realtime]);
    expect(a.count()).toBe(3);
  });

  it('a committed background stream frees its slot exactly once, however often it is closed', async () => {
    const r = start('    chain: [a/m1]', 'background_concurrency: 1');
    const unread = (await request(r, { priority: 'background', stream: true })) as StreamResult;
    // The consumer never reads it (e.g. writing the response head failed) and closes it, twice.
    const events = unread.events[Symbol.asyncIterator]();
    await events.return?.();
    await events.return?.();
    expect(await events.next()).toEqual({ done: true, value: undefined });
    // The slot is free again, and only once: the limit of 1 still holds two streams apart.
    a.on('m1', { kind: 'answer', chunks: 2, chunkIntervalMs: 200 });
    const first = (await request(r, { priority: 'background', stream: true })) as StreamResult;
    const second = request(r, { priority: 'background', stream: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(a.count()).toBe(2);
    for await (const _ of first.events) void _;
    const next = (await second) as StreamResult;
    expect(a.count()).toBe(3);
    for await (const _ of next.events) void _;
  });

  it('round_robin over 2 healthy targets × 4 requests → 2 each', async () => {
    const r = start('    strategy: round_robin\n    chain: [a/m1, b/m2]');
    const targets: string[] = [];
    for (let i = 0; i < 4; i++) targets.push((await request(r)).outcome.target);
    expect(targets.filter((t) => t === 'a/m1')).toHaveLength(2);
    expect(a.count()).toBe(2);
    expect(b.count()).toBe(2);
  });

  it('least_busy sends a request to the target with fewer requests in flight', async () => {
    a.on('m1', { kind: 'answer', headerDelayMs: 300 });
    const r = start('    strategy: least_busy\n    chain: [a/m1, b/m2]');
    const slow = request(r);
    await a.waitForRequest();
    const fast = await request(r);
    expect(fast.outcome.target).toBe('b/m2');
    expect((await slow).outcome.target).toBe('a/m1');
  });
});
