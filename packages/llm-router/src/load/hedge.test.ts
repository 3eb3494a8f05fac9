import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import type { AttemptObserver, Priority, RouterResult } from '../types.js';
import { useFakePair } from '../test-support.js';

/**
 * `hedge_after`: when the attempt in flight has no first content delta (non-stream:
 * no answer) by then, the next usable target is called too; the first answer wins
 * and the other call is closed upstream, recorded `cancelled` / `hedge_lost`, and
 * never counted against its target's health.
 */
const fakes = useFakePair({ names: ['gpu', 'cloud'] });
/** Long enough that a hedge started after HEDGE_MS surely reaches its fake first, on a loaded machine too. */
const SLOW_MS = 1_500;
const HEDGE_MS = 100;

function start(options: { settings?: string; alias?: string; chain?: string; cloud?: string } = {}): Router {
  const config = parseConfig(
    `settings: { probe_interval: 1h, failure_threshold: 1, hedge_after: ${HEDGE_MS}ms${options.settings ?? ''} }
background_concurrency: 10
providers:
  gpu: { type: openai, base_url: "${fakes.a.baseUrl}", api_key_required: false }
  cloud: { type: openai, base_url: "${fakes.b.baseUrl}", api_key_required: false, price: { input: 1, output: 2 }${options.cloud ?? ''} }
aliases:
  mana/fast-text: { chain: ${options.chain ?? '[gpu/m, cloud/m]'}${options.alias ?? ''} }
${otherAliases('mana/fast-text')}`,
    { env: {} },
  );
  return fakes.use(createRouter({ config }));
}

const ask = (r: Router, stream: boolean, priority: Priority = 'realtime'): Promise<RouterResult> =>
  r.execute({ model: 'mana/fast-text', body: { messages: [{ role: 'user', content: 'hi' }] }, stream, priority });

/** The answer's text, read to the end (a stream's deltas joined). */
async function text(result: RouterResult): Promise<string> {
  if (result.kind === 'json') return (result.body as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
  if (result.kind !== 'stream') throw new Error(`unexpected ${result.kind}`);
  let out = '';
  for await (const event of result.events) out += (JSON.parse(event) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '';
  return out;
}

function healthOf(r: Router, provider: string) {
  return r.health().find((h) => h.provider === provider)!;
}

const chatRequests = (fake: typeof fakes.a) => fake.requests.filter((q) => q.operation === 'chat');

describe.each([false, true])('hedge_after (stream: %s)', (stream) => {
  it('a primary with no first token by then is hedged: the hedge answers, the primary is closed upstream and recorded hedge_lost', async () => {
    fakes.a.on('m', { kind: 'hang' });
    const r = start();
    const started = Date.now();
    const result = await ask(r, stream);
    expect(await text(result)).toBe('Hello from m via cloud');
    expect(Date.now() - started).toBeLessThan(SLOW_MS);
    expect(result.outcome.target).toBe('cloud/m');
    expect(result.outcome.hedge).toBe('won');
    // The loser is recorded first, so the answering attempt stays the last one; a cancelled call is no failover.
    expect(result.outcome.attempts.map((a) => [a.target, a.outcome, a.reason, a.failedOver])).toEqual([
      ['gpu/m', 'cancelled', 'hedge_lost', false],
      ['cloud/m', 'ok', 'ok', false],
    ]);
    expect(result.outcome.attempts[0]!.detail).toBe('cloud/m answered first');
    expect(result.outcome.attempts[0]!.durationMs).toBeGreaterThanOrEqual(HEDGE_MS - 5);
    expect(result.outcome.upstreamCalls).toBe(2);
    // The fake sees its request closed by the gateway.
    const closed = await fakes.a.waitForClientClose(2_000);
    expect(closed.model).toBe('m');
    // A lost race is no failure (failure_threshold is 1: one counted failure would mark gpu unhealthy).
    expect(healthOf(r, 'gpu').healthy).not.toBe(false);
    expect(healthOf(r, 'gpu').consecutiveFailures).toBe(0);
  });

  it('a primary that answers within hedge_after is not hedged', async () => {
    const r = start({ alias: ', settings: { hedge_after: 1s }' }); // the alias's setting wins over the global one
    const result = await ask(r, stream);
    expect(await text(result)).toBe('Hello from m via gpu');
    expect(result.outcome.hedge).toBe('not_needed');
    expect(result.outcome.attempts.map((a) => a.outcome)).toEqual(['ok']);
    expect(chatRequests(fakes.b)).toHaveLength(0);
  });

  it('a hedge that loses is closed upstream, recorded cancelled / hedge_lost, and leaves its target healthy', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 600 });
    fakes.b.on('m', { kind: 'hang' });
    const r = start();
    const result = await ask(r, stream);
    expect(await text(result)).toBe('Hello from m via gpu');
    expect(result.outcome.hedge).toBe('lost');
    expect(result.outcome.attempts.map((a) => [a.target, a.outcome, a.reason])).toEqual([
      ['cloud/m', 'cancelled', 'hedge_lost'],
      ['gpu/m', 'ok', 'ok'],
    ]);
    // The price goes with the lost call: it may have cost tokens (none reported here: it never answered).
    expect(result.outcome.attempts[0]!.price).toEqual({ input: 1, output: 2, cachedInput: undefined });
    await fakes.b.waitForClientClose(2_000);
    expect(healthOf(r, 'cloud').healthy).not.toBe(false);
    expect(healthOf(r, 'cloud').consecutiveFailures).toBe(0);
    // Still usable: the next request that needs it gets it.
    fakes.a.on('m', { kind: 'status', status: 503 });
    fakes.b.on('m', { kind: 'answer' });
    const next = await ask(r, stream);
    expect(await text(next)).toBe('Hello from m via cloud');
  });

  it('a primary that fails while the hedge runs leaves the request to the hedge', async () => {
    fakes.a.on('m', { kind: 'hang' });
    fakes.b.on('m', { kind: 'answer', headerDelayMs: 400 });
    const r = start();
    const pending = ask(r, stream);
    await fakes.b.waitForRequest(undefined, 2_000); // the hedge started
    await fakes.a.stop(); // the gpu drops its connections: the primary fails before any token
    try {
      const result = await pending;
      expect(await text(result)).toBe('Hello from m via cloud');
      expect(result.outcome.hedge).toBe('won');
      expect(result.outcome.attempts.map((a) => [a.target, a.outcome, a.failedOver])).toEqual([
        ['gpu/m', 'failed', true],
        ['cloud/m', 'ok', false],
      ]);
    } finally {
      await fakes.a.restart();
    }
  });

  it('hedges at most once per request', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 700 });
    fakes.b.on('a', { kind: 'hang' });
    const r = start({ chain: '[gpu/m, cloud/a, cloud/b]' });
    const result = await ask(r, stream);
    expect(await text(result)).toBe('Hello from m via gpu');
    expect(result.outcome.hedge).toBe('lost');
    expect(fakes.b.requests.map((q) => q.model)).toEqual(['a']); // cloud/b never called
  });

  it('background requests do not hedge unless the alias says hedge_background: true', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 400 });
    const r = start();
    const waited = await ask(r, stream, 'background');
    expect(await text(waited)).toBe('Hello from m via gpu');
    expect(waited.outcome.hedge).toBeUndefined();
    expect(chatRequests(fakes.b)).toHaveLength(0);
    await r.close();

    fakes.a.on('m', { kind: 'hang' });
    const opted = start({ alias: ', hedge_background: true' });
    const hedged = await ask(opted, stream, 'background');
    expect(await text(hedged)).toBe('Hello from m via cloud');
    expect(hedged.outcome.hedge).toBe('won');
  });
});

describe('hedge_after without a stream', () => {
  it('the first complete answer wins, not the first response head', async () => {
    // Both are slow; the hedge, started HEDGE_MS later, completes first.
    fakes.a.on('m', { kind: 'answer', headerDelayMs: SLOW_MS });
    fakes.b.on('m', { kind: 'answer', headerDelayMs: 200 });
    const r = start();
    const started = Date.now();
    const result = await ask(r, false);
    expect(await text(result)).toBe('Hello from m via cloud');
    expect(Date.now() - started).toBeLessThan(SLOW_MS);
    expect(result.outcome.attempts.map((a) => [a.target, a.outcome, a.reason])).toEqual([
      ['gpu/m', 'cancelled', 'hedge_lost'],
      ['cloud/m', 'ok', 'ok'],
    ]);
    await fakes.a.waitForClientClose(2_000);
  });

  it('with nothing else callable at once, no hedge starts (unavailable) and the primary answers', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 300 });
    const r = start({ cloud: ', max_concurrency: 1' });
    // Fill the cloud's one slot with a request of its own (straight to it).
    fakes.b.on('m', { kind: 'answer', headerDelayMs: 800 });
    const busy = r.execute({ model: 'cloud/m', body: { messages: [{ role: 'user', content: 'x' }] }, stream: false });
    await fakes.b.waitForRequest(undefined, 2_000);
    const result = await ask(r, false);
    expect(result.outcome.target).toBe('gpu/m');
    expect(result.outcome.hedge).toBe('unavailable');
    expect(chatRequests(fakes.b)).toHaveLength(1);
    await busy;
  });
});

describe('hedge_after and the request observer (traces)', () => {
  it('hears two calls, each ended with its own attempt: the hedge is a second call beside the first', async () => {
    fakes.a.on('m', { kind: 'hang' });
    const heard: string[] = [];
    const observer: AttemptObserver = {
      callStarted(call) {
        heard.push(`started ${call.target}`);
        return {
          headers: undefined,
          ended: (attempt) => heard.push(`ended ${call.target}: ${attempt.target} ${attempt.outcome}`),
          published: (attempt) => heard.push(`published ${call.target}: ${attempt.target}`),
          streamEnded: (summary) => heard.push(`stream ended ${call.target}: ${summary.end}`),
        };
      },
      skipped: (attempt) => heard.push(`skipped ${attempt.target}`),
    };
    const r = start();
    const result = await r.execute({ model: 'mana/fast-text', body: { messages: [{ role: 'user', content: 'hi' }] }, stream: true, observer });
    await text(result);
    expect(heard).toEqual([
      'started gpu/m',
      'started cloud/m',
      'ended gpu/m: gpu/m cancelled',
      'published gpu/m: gpu/m',
      'ended cloud/m: cloud/m ok',
      'published cloud/m: cloud/m',
      'stream ended cloud/m: complete',
    ]);
  });
});

describe('hedge_after in the config', () => {
  const config = (settings: string, alias = '') =>
    parseConfig(`settings:\n  hedge_after: ${settings}\naliases:\n  mana/fast-text:\n    chain: [ollama/y]${alias}\n${otherAliases('mana/fast-text')}`, {
      env: {},
      source: 'aliases.yaml',
    });

  it('is off by default and where set to 0; a duration elsewhere', () => {
    expect(config('0').settings.hedgeAfterMs).toBe(0);
    expect(config('800ms').settings.hedgeAfterMs).toBe(800);
    expect(config('2s').aliases.get('mana/fast-text')!.hedgeBackground).toBe(false);
    expect(config('2s', '\n    hedge_background: true').aliases.get('mana/fast-text')!.hedgeBackground).toBe(true);
  });

  it('refuses bad values at load, with the line', () => {
    expect(() => config('soon')).toThrow(/aliases\.yaml line 2: settings\.hedge_after must be a duration/);
    expect(() => config('-1s')).toThrow(/line 2: settings\.hedge_after/);
    expect(() => config('1s', '\n    hedge_background: maybe')).toThrow(/line 6 .*hedge_background must be true or false/);
    expect(() =>
      parseConfig(`aliases:\n  mana/fast-text:\n    - { target: ollama/y, settings: { hedge_after: fast } }\n${otherAliases('mana/fast-text')}`, { env: {}, source: 'aliases.yaml' }),
    ).toThrow(/line 3 .*settings\.hedge_after/);
  });
});
