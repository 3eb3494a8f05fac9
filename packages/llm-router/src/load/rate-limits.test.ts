import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import type { ChatRequestBody, Priority, RouterResult } from '../types.js';
import { useFakePair } from '../test-support.js';

/**
 * `rpm` / `tpm` as a provider's quota: a request that would pass it is never
 * sent there (the provider is not asked to find out by 429); the target is
 * full in the same sense as at its `max_concurrency`, so a realtime request
 * passes it by for the next usable target of the chain.
 */
const fakes = useFakePair({ names: ['quota', 'spare'] });

function start(providerQuota: string, chain = '[quota/m, spare/m]', settings = '', now?: () => number): Router {
  const config = parseConfig(
    `settings: { probe_interval: 1h${settings} }
providers:
  quota: { type: openai, base_url: "${fakes.a.baseUrl}", api_key_required: false${providerQuota} }
  spare: { type: openai, base_url: "${fakes.b.baseUrl}", api_key_required: false, price: { input: 1, output: 2 } }
aliases:
  mana/fast-text: ${chain}
${otherAliases('mana/fast-text')}`,
    { env: {} },
  );
  return fakes.use(createRouter(now === undefined ? { config } : { config, now }));
}

const ask = (r: Router, body: Partial<ChatRequestBody> = {}, stream = false, priority: Priority = 'realtime'): Promise<RouterResult> =>
  r.execute({ model: 'mana/fast-text', body: { messages: [{ role: 'user', content: 'hi' }], ...body }, stream, priority });

async function drain(result: RouterResult): Promise<RouterResult> {
  if (result.kind === 'stream') for await (const _ of result.events);
  return result;
}

const chats = (fake: typeof fakes.a): number => fake.requests.filter((q) => q.operation === 'chat').length;

describe.each([false, true])('rpm on a provider (stream: %s)', (stream) => {
  it('sends it N requests in the minute and passes it by, at once, for the rest', async () => {
    const r = start(', rpm: 2');
    const started = Date.now();
    const results = await Promise.all([0, 1, 2, 3, 4].map(() => ask(r, {}, stream).then(drain)));
    expect(Date.now() - started).toBeLessThan(2_000); // nobody waited for the minute to pass
    expect(results.filter((res) => res.outcome.target === 'quota/m')).toHaveLength(2);
    const spilled = results.filter((res) => res.outcome.target === 'spare/m');
    expect(spilled).toHaveLength(3);
    for (const res of spilled) {
      expect(res.outcome.attempts[0]).toMatchObject({ target: 'quota/m', outcome: 'skipped', reason: 'rate_limited', failedOver: true });
      expect(res.outcome.attempts[0]!.detail).toMatch(/^rpm 2\/2 \(provider quota\), 0 queued(; waited \d+ ms)?$/);
    }
    expect(chats(fakes.a)).toBe(2);
  });
});

describe('tpm on a provider', () => {
  it('charges the prompt estimate plus max_tokens, and passes the target by when a request would not fit the minute', async () => {
    const r = start(', tpm: 1000');
    expect((await ask(r, { max_tokens: 600 })).outcome.target).toBe('quota/m');
    const big = await ask(r, { max_tokens: 600 }); // ~610 used + ~610 > 1000
    expect(big.outcome.target).toBe('spare/m');
    expect(big.outcome.attempts[0]).toMatchObject({ target: 'quota/m', outcome: 'skipped', reason: 'rate_limited' });
    expect(big.outcome.attempts[0]!.detail).toMatch(/^tpm (\d+)\/1000, needs (\d+) \(provider quota\)/);
    const [, used, needs] = /^tpm (\d+)\/1000, needs (\d+)/.exec(big.outcome.attempts[0]!.detail!)!;
    expect(Number(used)).toBeGreaterThan(600);
    expect(Number(needs)).toBeGreaterThan(600);
    expect((await ask(r, { max_tokens: 100 })).outcome.target).toBe('quota/m'); // a small one still fits
    expect(chats(fakes.a)).toBe(2);
  });

  it('reserves context_reserve (512 by default) for the answer of a request without max_tokens', async () => {
    const r = start(', tpm: 1000');
    expect((await ask(r)).outcome.target).toBe('quota/m');
    expect((await ask(r)).outcome.target).toBe('spare/m'); // 2 × (prompt + 512) > 1000
    const view = r.aliases().find((a) => a.alias === 'mana/fast-text')!.chain[0]!;
    expect(view.rate).toHaveLength(1);
    expect(view.rate![0]).toMatchObject({ unit: 'tpm', counts: 'provider', limit: 1000, queued: 0, saturated: false });
    expect(view.rate![0]!.used).toBeGreaterThan(512);
    expect(view.rate![0]!.used).toBeLessThan(600);

    const reserved = start(', tpm: 1000', '[quota/m, spare/m]', ', context_reserve: 100');
    for (let i = 0; i < 4; i++) expect((await ask(reserved)).outcome.target).toBe('quota/m'); // 4 × (prompt + 100) ≤ 1000
  });

  it('counts a request larger than the whole tpm as the whole tpm: it goes to an unused window alone', async () => {
    const r = start(', tpm: 1000');
    expect((await ask(r, { max_tokens: 5_000 })).outcome.target).toBe('quota/m');
    expect((await ask(r, { max_tokens: 1 })).outcome.target).toBe('spare/m');
  });
});

describe('the windows and the chain', () => {
  it('a chain entry may name its own rpm: it counts alone, and keeps its provider\'s tpm', async () => {
    const r = start(', rpm: 100, tpm: 100000', '[{ target: quota/m, rpm: 1 }, spare/m]');
    expect((await ask(r)).outcome.target).toBe('quota/m');
    const second = await ask(r);
    expect(second.outcome.target).toBe('spare/m');
    expect(second.outcome.attempts[0]!.detail).toMatch(/^rpm 1\/1 \(target quota\/m\)/);
    const view = r.aliases().find((a) => a.alias === 'mana/fast-text')!.chain[0]!;
    expect(view.rate).toEqual([
      { unit: 'rpm', counts: 'target', used: 1, limit: 1, queued: 0, saturated: true },
      { unit: 'tpm', counts: 'provider', used: expect.any(Number), limit: 100000, queued: 0, saturated: false },
    ]);
    expect(view.load).toBeUndefined(); // no max_concurrency declared
  });

  it('a retry of the same target is one more request: charged, and failed over instead when the window is used up', async () => {
    fakes.a.on('m', { kind: 'status', status: 503 });
    const r = start(', rpm: 2', '[quota/m, spare/m]', ', retries: 5');
    const res = await ask(r);
    expect(res.outcome.target).toBe('spare/m');
    expect(chats(fakes.a)).toBe(2); // the first call and one retry: the rpm of 2
  });

  it('a realtime request with nothing else usable waits for the window (bounded by first_byte_timeout), then is passed by', async () => {
    const r = start(', rpm: 1', '[quota/m]', ', first_byte_timeout: 300ms');
    expect((await ask(r)).outcome.target).toBe('quota/m');
    const started = Date.now();
    const error = await ask(r).then(
      () => undefined,
      (e: unknown) => e as { code: string; outcome: RouterResult['outcome'] },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(error?.outcome.attempts[0]).toMatchObject({ reason: 'rate_limited', outcome: 'skipped' });
    expect(error?.outcome.attempts[0]!.detail).toMatch(/waited \d+ ms/);
    expect(chats(fakes.a)).toBe(1);
  });

  it('a background request waits for the window up to background_queue_timeout before it moves on to a priced target', async () => {
    const r = start(', rpm: 1', '[quota/m, spare/m]', ', background_queue_timeout: 300ms');
    expect((await ask(r, {}, false, 'background')).outcome.target).toBe('quota/m');
    const started = Date.now();
    const res = await ask(r, {}, false, 'background');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(res.outcome.target).toBe('spare/m');
    expect(res.outcome.attempts[0]).toMatchObject({ reason: 'rate_limited' });
  });

  it('background requests wait for the window (FIFO) and are answered by the quota target, never spilled to the priced one', async () => {
    // The window is measured by the router's clock: moving it a minute on lets the next waiter in (within the 1 s re-check).
    let shift = 0;
    const r = start(', rpm: 1', '[quota/m, spare/m]', '', () => Date.now() + shift);
    expect((await ask(r, {}, false, 'background')).outcome.target).toBe('quota/m');
    const order: number[] = [];
    const waiting = [1, 2].map(async (i) => {
      await new Promise((resolve) => setTimeout(resolve, i * 20)); // arrival order
      const res = await ask(r, {}, false, 'background');
      order.push(i);
      return res;
    });
    const queued = (): number => r.aliases().find((a) => a.alias === 'mana/fast-text')!.chain[0]!.rate![0]!.queued;
    while (queued() < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    shift += 60_000;
    while (order.length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(order).toEqual([1]);
    expect(queued()).toBe(1); // the second one waits for the next minute
    shift += 60_000;
    const results = await Promise.all(waiting);
    expect(order).toEqual([1, 2]);
    for (const res of results) {
      expect(res.outcome.target).toBe('quota/m');
      expect(res.outcome.attempts).toHaveLength(1); // not skipped: it waited
    }
    expect(chats(fakes.b)).toBe(0);
  });

  it('refuses a bad rpm or tpm at load, with its line', () => {
    const provider = (line: string): string =>
      `providers:\n  cloud:\n    type: openai\n    base_url: http://127.0.0.1:1/v1\n    ${line}\naliases:\n  mana/fast-text: [cloud/m]\n${otherAliases('mana/fast-text')}`;
    expect(() => parseConfig(provider('rpm: 0'), { env: {} })).toThrow(/line 5.*rpm of provider cloud must be a whole number ≥ 1/s);
    expect(() => parseConfig(provider('tpm: 1.5'), { env: {} })).toThrow(/line 5/);
    expect(() => parseConfig(provider('tpm: -3'), { env: {} })).toThrow(/line 5/);
    expect(() =>
      parseConfig(`aliases:\n  mana/fast-text:\n    - { target: ollama/m, tpm: lots }\n${otherAliases('mana/fast-text')}`, { env: {} }),
    ).toThrow(/line 3.*tpm of target ollama\/m/s);
  });
});
