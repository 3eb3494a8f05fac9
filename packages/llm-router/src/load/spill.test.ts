import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router, type RouterOptions } from '../router.js';
import type { Priority, RouterResult } from '../types.js';
import { failure, useFakePair } from '../test-support.js';

/**
 * `max_concurrency` on a busy local box: realtime requests spill to the next
 * usable target at once instead of queueing behind the box; background ones
 * wait for it, in arrival order; nothing fails only because the box is busy.
 */
const fakes = useFakePair({ names: ['gpu', 'cloud'] });
const WORK_MS = 400;

function start(chain: string, settings = '', capacityShare?: RouterOptions['capacityShare']): Router {
  const config = parseConfig(
    `settings: { probe_interval: 1h${settings} }
background_concurrency: 10
providers:
  gpu: { type: openai, base_url: "${fakes.a.baseUrl}", api_key_required: false, max_concurrency: 2 }
  cloud: { type: openai, base_url: "${fakes.b.baseUrl}", api_key_required: false, price: { input: 1, output: 2 } }
aliases:
  mana/fast-text: ${chain}
${otherAliases('mana/fast-text')}`,
    { env: {} },
  );
  return fakes.use(createRouter(capacityShare === undefined ? { config } : { config, capacityShare }));
}

const ask = (r: Router, stream: boolean, priority: Priority = 'realtime', signal?: AbortSignal): Promise<RouterResult> =>
  r.execute({ model: 'mana/fast-text', body: { messages: [{ role: 'user', content: 'hi' }] }, stream, priority, signal });

async function drain(result: RouterResult): Promise<void> {
  if (result.kind === 'stream') for await (const _ of result.events);
}

describe.each([false, true])('max_concurrency: 2 on the gpu (stream: %s)', (stream) => {
  it('a realtime request beyond it is skipped as saturated and answered by the cloud at once', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: WORK_MS });
    const r = start('[gpu/m, cloud/m]');
    const started = Date.now();
    const results = await Promise.all([0, 1, 2, 3].map(() => ask(r, stream).then(async (res) => (await drain(res), { res, at: Date.now() - started }))));
    const byGpu = results.filter(({ res }) => res.outcome.target === 'gpu/m');
    const byCloud = results.filter(({ res }) => res.outcome.target === 'cloud/m');
    expect(byGpu).toHaveLength(2);
    expect(byCloud).toHaveLength(2);
    const firstGpuAnswer = Math.min(...byGpu.map(({ at }) => at));
    expect(firstGpuAnswer).toBeGreaterThanOrEqual(WORK_MS);
    for (const { res, at } of byCloud) {
      expect(at).toBeLessThan(firstGpuAnswer); // did not wait behind the box
      expect(res.outcome.attempts[0]).toMatchObject({ target: 'gpu/m', outcome: 'skipped', reason: 'saturated', failedOver: true });
      expect(res.outcome.attempts[0]!.detail).toMatch(/^in flight 2\/2 \(provider gpu\)/);
    }
    expect(fakes.a.requests.filter((q) => q.operation === 'chat')).toHaveLength(2); // never more than 2 at the box
  });

  it('a realtime request that spilled to a failing cloud comes back and waits for the busy gpu instead of failing', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: WORK_MS });
    fakes.b.on('m', { kind: 'status', status: 503, body: { error: { message: 'overloaded' } } });
    const r = start('[gpu/m, cloud/m]');
    const busy = [ask(r, stream), ask(r, stream)].map((p) => p.then(drain));
    const spilled = await ask(r, stream);
    await drain(spilled);
    expect(spilled.outcome.target).toBe('gpu/m');
    expect(spilled.outcome.attempts.map((a) => [a.target, a.outcome, a.reason])).toEqual([
      ['gpu/m', 'skipped', 'saturated'],
      ['cloud/m', 'failed', 'http_503'],
      ['gpu/m', 'ok', 'ok'],
    ]);
    await Promise.all(busy);
    expect(fakes.a.requests.filter((q) => q.operation === 'chat')).toHaveLength(3); // never more than 2 at once: it waited its turn
  });

  it('with nothing else usable, a realtime request waits for a slot instead of failing', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: WORK_MS });
    const r = start('[gpu/m]');
    // Each caller reads its stream to the end (a committed stream holds its slot until then).
    const results = await Promise.all([0, 1, 2].map(() => ask(r, stream).then(async (res) => (await drain(res), res))));
    for (const res of results) expect(res.outcome.target).toBe('gpu/m');
  });

  it('background requests wait for the busy gpu (FIFO) and never spill to the priced cloud', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 200 });
    const r = start('[gpu/m, cloud/m]');
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4, 5].map(async (i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 10)); // arrival order
        const res = await ask(r, stream, 'background');
        await drain(res);
        order.push(i);
        expect(res.outcome.target).toBe('gpu/m');
      }),
    );
    expect(fakes.b.requests.filter((q) => q.operation === 'chat')).toHaveLength(0);
    expect(order.slice(2, 4).sort()).toEqual([2, 3]); // the first two waiters were served before the last two
    expect(order.slice(4).sort()).toEqual([4, 5]);
  });
});

describe('the queue', () => {
  it('a realtime request waits queue_timeout for a slot before it spills', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: WORK_MS });
    const r = start('[gpu/m, cloud/m]', ', queue_timeout: 150ms');
    const busy = [ask(r, false), ask(r, false)];
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = Date.now();
    const spilled = await ask(r, false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(spilled.outcome.target).toBe('cloud/m');
    expect(spilled.outcome.attempts[0]!.detail).toMatch(/waited \d+ ms/);
    await Promise.all(busy);
  });

  it.each([false, true])('a slot freed within queue_timeout goes to the waiting request (stream: %s)', async (stream) => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 100 });
    const r = start('[gpu/m, cloud/m]', ', queue_timeout: 1s');
    const results = await Promise.all([0, 1, 2].map(() => ask(r, stream).then(async (res) => (await drain(res), res))));
    expect(results.map((res) => res.outcome.target)).toEqual(['gpu/m', 'gpu/m', 'gpu/m']);
  });

  it('a client that disconnects while queued leaves the queue at once', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: WORK_MS });
    const r = start('[gpu/m]');
    const busy = [ask(r, false), ask(r, false)];
    const controller = new AbortController();
    const queued = ask(r, false, 'realtime', controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    controller.abort();
    const error = await failure(queued);
    expect(error.code).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(WORK_MS / 2); // not when a slot frees at WORK_MS
    await Promise.all(busy);
    expect(fakes.a.requests.filter((q) => q.operation === 'chat')).toHaveLength(2); // the aborted one never reached the box
  });

  it('takes the effective limit from capacityShare (a replica\'s share of the total), asked on each check', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: WORK_MS });
    const asked: unknown[] = [];
    const r = start('[gpu/m, cloud/m]', '', (total, subject) => {
      asked.push({ total, ...subject });
      return total / 2;
    });
    const results = await Promise.all([ask(r, false), ask(r, false)]);
    expect(results.map((res) => res.outcome.target).sort()).toEqual(['cloud/m', 'gpu/m']);
    expect(asked[0]).toEqual({ total: 2, kind: 'provider', name: 'gpu', limit: 'max_concurrency' });
  });

  it('refuses a bad max_concurrency at load, with its line', () => {
    expect(() =>
      parseConfig(`providers:\n  gpu:\n    type: openai\n    base_url: http://127.0.0.1:1/v1\n    max_concurrency: 0\naliases:\n  mana/fast-text: [gpu/m]\n${otherAliases('mana/fast-text')}`, { env: {} }),
    ).toThrow(/line 5/);
    expect(() =>
      parseConfig(`aliases:\n  mana/fast-text:\n    - { target: ollama/m, max_concurrency: two }\n${otherAliases('mana/fast-text')}`, { env: {} }),
    ).toThrow(/line 3/);
    expect(() => parseConfig(`settings:\n  queue_timeout: soon\naliases:\n  mana/fast-text: [x/y]\n${otherAliases('mana/fast-text')}`, { env: {} })).toThrow(/line 2/);
  });
});
