import { refusingPort, type FakeUpstream } from '@mana/llm-testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from './config/load-config.js';
import { otherAliases } from './config/test-configs.js';
import { createRouter, type Router } from './router.js';
import { failure, useFakePair } from './test-support.js';
import type { JsonResult, RouterResult, StreamResult } from './types.js';

const KEY_A = 'sk-test-secret-aaaaaaaa';
const KEY_B = 'sk-test-secret-bbbbbbbb';
const LONG_FORM = 'mana/long-form';

const fakes = useFakePair({ names: ['a', 'b'] });
let a: FakeUpstream;
let b: FakeUpstream;
let deadPort: number;
let clock = 1_000_000;
const now = () => clock;
let router: Router | undefined;

beforeAll(async () => {
  ({ a, b } = fakes);
  deadPort = await refusingPort();
});

function config(options: { aBase?: string; alias?: string; settings?: string } = {}) {
  const text = `
settings: { connect_timeout: 1s, first_byte_timeout: 5s ${options.settings ?? ''} }
providers:
  a: { type: openai, base_url: "${options.aBase ?? a.baseUrl}", api_key: "${KEY_A}" }
  b: { type: openai, base_url: "${b.baseUrl}", api_key: "${KEY_B}" }
aliases:
  ${LONG_FORM}:
${options.alias ?? '    chain: [a/m1, b/m2]'}
${otherAliases(LONG_FORM)}`;
  return parseConfig(text, { source: 'test', env: {} });
}

function start(options: Parameters<typeof config>[0] = {}): Router {
  router = fakes.use(createRouter({ config: config(options), now }));
  return router;
}

const ask = (r: Router, extra: Partial<Parameters<Router['execute']>[0]> = {}): Promise<RouterResult> =>
  r.execute({ model: LONG_FORM, body: { model: LONG_FORM, messages: [{ role: 'user', content: 'hi' }] }, stream: false, ...extra });

function json(result: RouterResult): JsonResult {
  expect(result.kind).toBe('json');
  return result as JsonResult;
}

async function collect(result: RouterResult): Promise<string> {
  expect(result.kind).toBe('stream');
  let text = '';
  for await (const data of (result as StreamResult).events) {
    const chunk = JSON.parse(data) as { choices: { delta: { content?: string } }[] };
    text += chunk.choices[0]?.delta.content ?? '';
  }
  return text;
}

describe('router: non-streaming', () => {
  it('answers from a single healthy target with the model rewritten and the key sent', async () => {
    a.on('m1', { kind: 'answer', content: 'hello', usage: { prompt_tokens: 3, completion_tokens: 2 } });
    const result = json(await ask(start()));
    expect(result.outcome.target).toBe('a/m1');
    expect(result.outcome.upstreamCalls).toBe(1);
    expect(result.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
    expect((result.body.choices as { message: { content: string } }[])[0]?.message.content).toBe('hello');
    expect(result.outcome.attempts).toMatchObject([{ target: 'a/m1', outcome: 'ok', failedOver: false }]);
    const req = a.requests[0]!;
    expect(req.model).toBe('m1');
    expect(req.headers.authorization).toBe(`Bearer ${KEY_A}`);
    expect(b.count()).toBe(0);
  });

  it('relays only rate-limit headers of the answering attempt', async () => {
    a.on('m1', { kind: 'answer', headers: { 'x-ratelimit-remaining-requests': '9', 'x-other': 'no' } });
    const result = json(await ask(start()));
    expect(result.headers).toEqual({ 'x-ratelimit-remaining-requests': '9' });
  });

  it('fails over when the first target refuses connections, and marks it unhealthy after the threshold', async () => {
    const r = start({ aBase: `http://127.0.0.1:${deadPort}/v1` });
    for (let i = 0; i < 2; i++) {
      const result = json(await ask(r));
      expect(result.outcome.target).toBe('b/m2');
      expect(result.outcome.attempts[0]).toMatchObject({ target: 'a/m1', outcome: 'failed', reason: 'connect_refused', failedOver: true });
    }
    expect(r.health().find((p) => p.provider === 'a')?.healthy).toBe(false);
    const third = json(await ask(r));
    expect(third.outcome.attempts[0]).toMatchObject({ outcome: 'skipped', reason: 'unhealthy' });
    expect(third.outcome.upstreamCalls).toBe(1);
    expect(b.count()).toBe(3);
  });

  it('skips a target the health cache knows is down: 0 calls to it, 1 to the second', async () => {
    const r = start();
    a.setProbeStatus(503);
    await r.probeNow();
    await r.probeNow();
    expect(r.health().find((p) => p.provider === 'a')?.healthy).toBe(false);
    const result = json(await ask(r));
    expect(a.count()).toBe(0);
    expect(b.count()).toBe(1);
    expect(result.outcome.attempts.map((x) => [x.target, x.outcome, x.reason])).toEqual([
      ['a/m1', 'skipped', 'unhealthy'],
      ['b/m2', 'ok', 'ok'],
    ]);
  });

  it('all unhealthy → no_healthy_provider listing each target, with Retry-After', async () => {
    const r = start();
    a.setProbeStatus(503);
    b.setProbeStatus(503);
    await r.probeNow();
    await r.probeNow();
    const error = await failure(ask(r));
    expect(error.code).toBe('no_healthy_provider');
    expect(error.outcome.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(error.outcome.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect(error.outcome.attempts.map((x) => `${x.target}:${x.outcome}:${x.reason}`)).toEqual([
      'a/m1:skipped:unhealthy',
      'b/m2:skipped:unhealthy',
    ]);
    expect(error.message).toContain('a/m1: skipped: unhealthy');
    expect(a.count() + b.count()).toBe(0);
  });

  it('try_anyway calls unhealthy targets in order when all are skipped', async () => {
    const r = start({ alias: '    on_all_unhealthy: try_anyway\n    chain: [a/m1, b/m2]' });
    a.setProbeStatus(503);
    b.setProbeStatus(503);
    await r.probeNow();
    await r.probeNow();
    const result = json(await ask(r));
    expect(result.outcome.target).toBe('a/m1');
    expect(result.outcome.attempts.map((x) => x.outcome)).toEqual(['skipped', 'skipped', 'ok']);
  });

  it('relays an upstream 400 without failing over', async () => {
    a.on('m1', { kind: 'status', status: 400, body: { error: { message: 'bad request: messages' } } });
    const result = await ask(start());
    expect(result.kind).toBe('upstream_error');
    if (result.kind !== 'upstream_error') return;
    expect(result.status).toBe(400);
    expect(JSON.parse(result.body)).toEqual({ error: { message: 'bad request: messages' } });
    expect(result.outcome.attempts).toMatchObject([{ outcome: 'rejected', reason: 'http_400', status: 400 }]);
    expect(b.count()).toBe(0);
  });

  it('429 → next target, and the first cools down for Retry-After seconds', async () => {
    a.on('m1', [{ kind: 'status', status: 429, headers: { 'retry-after': '7' } }, { kind: 'answer' }]);
    const r = start();
    const first = json(await ask(r));
    expect(first.outcome.target).toBe('b/m2');
    expect(first.outcome.attempts[0]).toMatchObject({ reason: 'http_429', status: 429, failedOver: true });
    const second = json(await ask(r));
    expect(second.outcome.attempts[0]).toMatchObject({ target: 'a/m1', outcome: 'skipped', reason: 'cooling_down' });
    clock += 7_001;
    const third = json(await ask(r));
    expect(third.outcome.target).toBe('a/m1');
    expect(a.count()).toBe(2);
  });

  it('5xx fails over; all failing → upstream_failed listing every target', async () => {
    a.on('m1', { kind: 'status', status: 503 });
    b.on('m2', { kind: 'destroy' });
    const error = await failure(ask(start()));
    expect(error.code).toBe('upstream_failed');
    expect(error.outcome.attempts.map((x) => `${x.target}:${x.reason}`)).toEqual(['a/m1:http_503', 'b/m2:socket_closed']);
    expect(error.message).toContain('503 Service Unavailable');
  });

  it('an empty answer, malformed JSON or a 401 fail over', async () => {
    const r = start();
    a.on('m1', [{ kind: 'empty_answer' }, { kind: 'malformed_json' }, { kind: 'status', status: 401 }]);
    const reasons: string[] = [];
    for (let i = 0; i < 3; i++) reasons.push(json(await ask(r)).outcome.attempts[0]!.reason);
    expect(reasons).toEqual(['empty_response', 'invalid_response', 'http_401']);
    expect(b.count()).toBe(3);
  });

  it('never puts API keys in errors, attempts or events', async () => {
    a.on('m1', { kind: 'status', status: 401, body: { error: { message: `invalid key ${KEY_A}` } } });
    b.on('m2', { kind: 'status', status: 403, body: { error: { message: `forbidden ${KEY_B}` } } });
    const r = start();
    const events: unknown[] = [];
    r.on('attempt', (e) => events.push(e));
    const error = await failure(ask(r));
    const seen = JSON.stringify({ message: error.message, attempts: error.outcome.attempts, events, health: r.health(), aliases: r.aliases() });
    expect(events).toHaveLength(2);
    expect(seen).not.toContain(KEY_A);
    expect(seen).not.toContain(KEY_B);
  });

  it('redacts our key from a relayed upstream error body', async () => {
    a.on('m1', { kind: 'status', status: 422, body: { error: { message: `key ${KEY_A} cannot do that` } } });
    const result = await ask(start());
    expect(result.kind).toBe('upstream_error');
    if (result.kind === 'upstream_error') {
      expect(result.body).not.toContain(KEY_A);
      expect(result.body).toContain('[redacted]');
    }
  });

  it('emits attempt events with the failover target', async () => {
    a.on('m1', { kind: 'status', status: 500 });
    const r = start();
    const events: { attempt: { target: string; failedOver: boolean }; nextTarget: string | undefined; requestId: string | undefined }[] = [];
    r.on('attempt', (e) => events.push(e));
    await ask(r, { requestId: 'req-1' });
    expect(events).toMatchObject([
      { requestId: 'req-1', attempt: { target: 'a/m1', failedOver: true }, nextTarget: 'b/m2' },
      { requestId: 'req-1', attempt: { target: 'b/m2', failedOver: false }, nextTarget: undefined },
    ]);
  });
});

describe('router: resolution and events', () => {
  it('rejects an unknown model with the known aliases, and a body without messages', async () => {
    const r = start();
    const unknown = await failure(r.execute({ model: 'gpt-4o', body: { messages: [] }, stream: false }));
    expect(unknown.code).toBe('unknown_model');
    expect(unknown.knownAliases).toContain(LONG_FORM);
    const invalid = await failure(r.execute({ model: LONG_FORM, body: {} as never, stream: false }));
    expect(invalid.code).toBe('invalid_request');
    expect(a.count()).toBe(0);
  });

  it('a direct provider/model target relays a 404 instead of failing over', async () => {
    a.on('nope', { kind: 'status', status: 404 });
    const result = await start().execute({ model: 'a/nope', body: { messages: [] }, stream: false });
    expect(result).toMatchObject({ kind: 'upstream_error', status: 404, outcome: { alias: undefined, target: 'a/nope' } });
  });

  it('an already aborted request makes no upstream call', async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await failure(ask(start(), { signal: controller.signal }))).code).toBe('aborted');
    expect(a.count()).toBe(0);
  });

  it('a closed router rejects with router_closed and makes no upstream call', async () => {
    const r = start();
    await r.close();
    const error = await failure(ask(r));
    expect(error).toMatchObject({ code: 'router_closed', outcome: { attempts: [], upstreamCalls: 0 } });
    expect(a.count() + b.count()).toBe(0);
  });

  it('emits health events when a provider flips', async () => {
    const r = start();
    const events: { provider: string; healthy: boolean }[] = [];
    r.on('health', (e) => events.push(e));
    a.setProbeStatus(503);
    await r.probeNow();
    await r.probeNow();
    a.setProbeStatus(200);
    clock += 61_000;
    await r.probeNow();
    expect(events.filter((e) => e.provider === 'a').map((e) => e.healthy)).toEqual([false, true]);
  });
});

describe('router: streaming', () => {
  const askStream = (r: Router, extra = {}) =>
    r.execute({ model: LONG_FORM, body: { messages: [{ role: 'user', content: 'hi' }], stream: true }, stream: true, ...extra });

  it('streams the chunks of a single target', async () => {
    a.on('m1', { kind: 'answer', content: 'one two three', chunks: 3 });
    const result = await askStream(start());
    expect(result.outcome.target).toBe('a/m1');
    expect(await collect(result)).toBe('one two three');
    expect(a.requests[0]!.body).toMatchObject({ model: 'm1', stream: true });
  });

  it('asks the upstream for usage when the client did not, records it, and relays exactly the chunks the client would have seen', async () => {
    a.on('m1', { kind: 'answer', content: 'one two three', chunks: 3, usage: { prompt_tokens: 12, completion_tokens: 7 } });
    const result = (await askStream(start())) as StreamResult;
    const chunks: Record<string, unknown>[] = [];
    for await (const data of result.events) chunks.push(JSON.parse(data) as Record<string, unknown>);
    expect(a.requests[0]!.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(result.usage).toEqual({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    expect(chunks.every((c) => Array.isArray(c.choices) && c.choices.length > 0)).toBe(true);
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
  });

  it('passes the usage chunk on when the client asked for it', async () => {
    a.on('m1', { kind: 'answer', content: 'one two', chunks: 2, usage: { prompt_tokens: 3, completion_tokens: 2 } });
    const result = (await start().execute({
      model: LONG_FORM,
      body: { messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } },
      stream: true,
    })) as StreamResult;
    const chunks: Record<string, unknown>[] = [];
    for await (const data of result.events) chunks.push(JSON.parse(data) as Record<string, unknown>);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } });
    expect(result.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2 });
  });

  it.each([
    ['an error event before the first delta', { kind: 'answer', errorEventAfterChunks: 0 }, 'stream_error'],
    ['an empty stream', { kind: 'empty_stream' }, 'empty_stream'],
    ['malformed data', { kind: 'malformed_json' }, 'invalid_response'],
    ['a 503', { kind: 'status', status: 503 }, 'http_503'],
  ] as const)('fails over on %s; the client sees one clean stream', async (_, behavior, reason) => {
    a.on('m1', behavior);
    b.on('m2', { kind: 'answer', content: 'from b', chunks: 2 });
    const result = await askStream(start());
    expect(result.outcome.target).toBe('b/m2');
    expect(result.outcome.attempts[0]).toMatchObject({ target: 'a/m1', reason });
    expect(await collect(result)).toBe('from b');
  });

  it('a stream cut after the first delta throws stream_interrupted and does not switch target', async () => {
    a.on('m1', { kind: 'answer', content: 'abcdef', chunks: 3, chunkIntervalMs: 5, cutAfterChunks: 1 });
    const result = await askStream(start());
    expect(result.outcome.target).toBe('a/m1');
    const error = await failure(collect(result));
    expect(error.code).toBe('stream_interrupted');
    expect(error.outcome.target).toBe('a/m1');
    expect(b.count()).toBe(0);
    // The break counts against the provider that broke it.
    expect(router?.health().find((p) => p.provider === 'a')?.consecutiveFailures).toBe(1);
  });

  it('an error event after the first delta throws stream_interrupted', async () => {
    a.on('m1', { kind: 'answer', content: 'abcdef', chunks: 3, errorEventAfterChunks: 2 });
    const result = await askStream(start());
    expect((await failure(collect(result))).code).toBe('stream_interrupted');
  });
});
