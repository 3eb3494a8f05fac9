import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { isRouterError } from '../errors.js';
import { createRouter, type Router } from '../router.js';
import type { RouterResult } from '../types.js';
import { useFakePair } from '../test-support.js';

/**
 * The case, scaled by 1/10 (the ratios are what matter): `retries: 2`
 * and `first_byte_timeout: 10s` became 1 s. A silent target is called once
 * (a retry of a timeout only multiplies the wait), the fallback answers at
 * about first_byte_timeout, and a committed stream that goes silent ends with
 * an error within `stream_idle_timeout`.
 */
const fakes = useFakePair({ names: ['gpu', 'cloud'] });
const FIRST_BYTE_MS = 1_000;

function start(extra = ''): Router {
  const config = parseConfig(
    `settings: { retries: 2, first_byte_timeout: ${FIRST_BYTE_MS}ms, probe_interval: 1h${extra} }
providers:
  gpu: { type: openai, base_url: "${fakes.a.baseUrl}", api_key_required: false }
  cloud: { type: openai, base_url: "${fakes.b.baseUrl}", api_key_required: false }
aliases:
  mana/fast-text: [gpu/m, cloud/m]
${otherAliases('mana/fast-text')}`,
    { env: {} },
  );
  return fakes.use(createRouter({ config }));
}

const ask = (r: Router, stream: boolean): Promise<RouterResult> =>
  r.execute({ model: 'mana/fast-text', body: { messages: [{ role: 'user', content: 'hi' }] }, stream });

/** The answer's text, read to its end (stream: the content deltas joined). */
async function text(result: RouterResult): Promise<string> {
  if (result.kind === 'json') return (result.body as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
  if (result.kind !== 'stream') throw new Error(`unexpected ${result.kind}`);
  let all = '';
  for await (const event of result.events) all += (JSON.parse(event) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '';
  return all;
}

describe.each([false, true])('retries: 2 with a first-byte timeout (stream: %s)', (stream) => {
  it('a silent first target is called once and the fallback answers at about first_byte_timeout', async () => {
    fakes.a.on('m', { kind: 'hang' });
    const r = start();
    const started = Date.now();
    const result = await ask(r, stream);
    const took = Date.now() - started;
    expect(await text(result)).toContain('via cloud');
    expect(took).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 20);
    expect(took).toBeLessThan(FIRST_BYTE_MS * 1.6); // one timeout, not three
    expect(fakes.a.requests.filter((q) => q.operation === 'chat')).toHaveLength(1);
    expect(result.outcome.attempts.map((a) => [a.target, a.outcome, a.reason])).toEqual([
      ['gpu/m', 'failed', 'first_byte_timeout'],
      ['cloud/m', 'ok', 'ok'],
    ]);
    await fakes.a.waitForClientClose(2_000); // the silent call was cancelled, not left hanging
  });

  it('a first token that would come at 2× first_byte_timeout is failed over at 1×', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 2 * FIRST_BYTE_MS });
    const r = start();
    const started = Date.now();
    const result = await ask(r, stream);
    expect(await text(result)).toContain('via cloud');
    const took = Date.now() - started;
    expect(took).toBeLessThan(FIRST_BYTE_MS * 1.6);
    expect(fakes.a.requests.filter((q) => q.operation === 'chat')).toHaveLength(1);
  });

  it('an upstream error is still retried on the same target (retries apply to answered errors)', async () => {
    fakes.a.on('m', [{ kind: 'status', status: 503 }, { kind: 'answer' }]);
    const r = start();
    const result = await ask(r, stream);
    expect(await text(result)).toContain('via gpu');
    expect(fakes.a.requests.filter((q) => q.operation === 'chat')).toHaveLength(2);
  });
});

describe('stream_idle_timeout', () => {
  it('ends a committed stream that goes silent after its first tokens with an error within the bound', async () => {
    // First chunk at once, the next one only after 10 s: the upstream stalls mid-answer.
    fakes.a.on('m', { kind: 'answer', content: 'one two three', chunks: 3, chunkIntervalMs: 10_000 });
    const r = start(', stream_idle_timeout: 400ms');
    const result = await ask(r, true);
    if (result.kind !== 'stream') throw new Error('expected a stream');
    expect(result.outcome.target).toBe('gpu/m');
    const events: string[] = [];
    const started = Date.now();
    let error: unknown;
    try {
      for await (const event of result.events) events.push(event);
    } catch (e) {
      error = e;
    }
    const took = Date.now() - started;
    expect(events.length).toBeGreaterThanOrEqual(1); // the first tokens reached the caller
    expect(isRouterError(error) && error.code).toBe('stream_interrupted');
    expect((error as Error).message).toContain('stream_idle_timeout');
    expect(took).toBeGreaterThanOrEqual(380);
    expect(took).toBeLessThan(1_500); // not the 10 s of the stall, nor first_byte_timeout
    await fakes.a.waitForClientClose(2_000); // the stalled upstream request was closed
  });

  it('is apart from first_byte_timeout: a slow first token within it is not cut by a short idle bound', async () => {
    fakes.a.on('m', { kind: 'answer', headerDelayMs: 600, chunks: 2, chunkIntervalMs: 100 });
    const r = start(', stream_idle_timeout: 300ms');
    const result = await ask(r, true);
    expect(await text(result)).toContain('via gpu');
    expect(result.outcome.target).toBe('gpu/m');
  });

  it('refuses a bad value at load, with its line', () => {
    expect(() =>
      parseConfig(`settings:\n  stream_idle_timeout: 0s\naliases:\n  mana/fast-text: [x/y]\n${otherAliases('mana/fast-text')}`, { env: {} }),
    ).toThrow(/line 2.*stream_idle_timeout|stream_idle_timeout.*line 2/s);
  });
});
