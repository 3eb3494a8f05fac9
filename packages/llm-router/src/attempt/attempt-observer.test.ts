import type { FakeUpstream } from '@mana/llm-testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import { useFakePair } from '../test-support.js';
import type { AnswerFacts, Attempt, AttemptObserver, CallObserver, StreamResult, StreamSummary, UpstreamCall } from '../types.js';

/**
 * A request's observer (AttemptObserver) against real loopback upstreams: what
 * it hears, in which order, and the headers it adds to a call reaching the
 * upstream only where the provider's `propagate_trace` lets them.
 */

const fakes = useFakePair();
let a: FakeUpstream;
let b: FakeUpstream;
const ALIAS = 'mana/long-form';

beforeAll(() => {
  ({ a, b } = fakes);
});

function start(chain: readonly string[], providerExtra = ''): Router {
  const config = parseConfig(
    `settings:\n  probe_interval: 60s\n  failure_threshold: 1000\nproviders:
  a: { type: openai, base_url: "${a.baseUrl}", api_key_required: false${providerExtra} }
  b: { type: openai, base_url: "${b.baseUrl}", api_key_required: false }
aliases:
  ${ALIAS}:
${chain.map((t) => `    - ${t}\n`).join('')}${otherAliases(ALIAS)}`,
    { env: {} },
  );
  return fakes.use(createRouter({ config }));
}

type Heard =
  | { readonly kind: 'started'; readonly call: UpstreamCall }
  | { readonly kind: 'skipped'; readonly attempt: Attempt }
  | { readonly kind: 'ended'; readonly target: string; readonly outcome: string; readonly failedOver: boolean; readonly answer: AnswerFacts | undefined }
  | { readonly kind: 'published'; readonly target: string; readonly failedOver: boolean }
  | { readonly kind: 'stream ended'; readonly target: string; readonly summary: StreamSummary };

/** Writes down what it hears; each call asks for a header naming its position. */
function listener(): { observer: AttemptObserver; heard: Heard[] } {
  const heard: Heard[] = [];
  let calls = 0;
  const observer: AttemptObserver = {
    callStarted(call) {
      heard.push({ kind: 'started', call });
      const n = ++calls;
      const watch: CallObserver = {
        headers: { 'x-test-call': `call-${n}` },
        ended: (attempt, answer) => heard.push({ kind: 'ended', target: attempt.target, outcome: attempt.outcome, failedOver: attempt.failedOver, answer }),
        published: (attempt) => heard.push({ kind: 'published', target: attempt.target, failedOver: attempt.failedOver }),
        streamEnded: (summary) => heard.push({ kind: 'stream ended', target: call.target, summary }),
      };
      return watch;
    },
    skipped: (attempt) => heard.push({ kind: 'skipped', attempt }),
  };
  return { observer, heard };
}

const body = (stream: boolean) => ({ messages: [{ role: 'user', content: 'hi' }], stream, max_tokens: 30 });

describe('a request with an observer', () => {
  it('hears each call start, end and publication in order: the failed one published as failed over when the next one is recorded', async () => {
    a.on('m1', { kind: 'status', status: 503 });
    b.on('m2', { kind: 'answer', content: 'from b', usage: { prompt_tokens: 7, completion_tokens: 3 }, finishReason: 'stop' });
    const router = start(['a/m1', 'b/m2']);
    const { observer, heard } = listener();
    const result = await router.execute({ model: ALIAS, body: body(false), stream: false, observer });
    expect(result.kind).toBe('json');
    expect(heard.map((h) => h.kind)).toEqual(['started', 'ended', 'started', 'published', 'ended', 'published']);
    const [first, firstEnd, second, firstPublished, secondEnd, secondPublished] = heard;
    expect(first).toMatchObject({ call: { target: 'a/m1', provider: 'a', providerType: 'openai', model: 'm1', serverAddress: '127.0.0.1', serverPort: a.port } });
    // The end says what the call did; whether the router moved on is only known when it did.
    expect(firstEnd).toMatchObject({ target: 'a/m1', outcome: 'failed', failedOver: false, answer: undefined });
    expect(second).toMatchObject({ call: { target: 'b/m2', serverPort: b.port } });
    expect(secondEnd).toMatchObject({ target: 'b/m2', outcome: 'ok', answer: { model: 'm2', finishReasons: ['stop'], usage: { prompt_tokens: 7, completion_tokens: 3 } } });
    expect((secondEnd as Extract<Heard, { kind: 'ended' }>).answer?.id).toMatch(/^chatcmpl-/);
    expect(firstPublished).toEqual({ kind: 'published', target: 'a/m1', failedOver: true });
    expect(secondPublished).toEqual({ kind: 'published', target: 'b/m2', failedOver: false });
  });

  it('sends each call the headers its observer asked for, under the call\'s own', async () => {
    a.on('m1', { kind: 'status', status: 503 });
    const router = start(['a/m1', 'b/m2']);
    const { observer } = listener();
    await router.execute({ model: ALIAS, body: body(false), stream: false, observer });
    expect(a.requests[0]!.headers['x-test-call']).toBe('call-1');
    expect(b.requests[0]!.headers['x-test-call']).toBe('call-2');
    expect(b.requests[0]!.headers['content-type']).toBe('application/json');
  });

  it('sends them to no provider with propagate_trace: false, and still hears its calls', async () => {
    const router = start(['a/m1'], ', propagate_trace: false');
    const { observer, heard } = listener();
    await router.execute({ model: ALIAS, body: body(false), stream: false, observer });
    expect(a.requests[0]!.headers['x-test-call']).toBeUndefined();
    expect(heard.map((h) => h.kind)).toEqual(['started', 'ended', 'published']);
  });

  it('hears a target skipped without a call as a skip, never as a call', async () => {
    const config = parseConfig(
      `providers:\n  a: { type: openai, base_url: "${a.baseUrl}", api_key: "\${UNSET_KEY}" }\n  b: { type: openai, base_url: "${b.baseUrl}", api_key_required: false }\n` +
        `aliases:\n  ${ALIAS}:\n    - a/m1\n    - b/m2\n${otherAliases(ALIAS)}`,
      { env: {} },
    );
    const router = fakes.use(createRouter({ config }));
    const { observer, heard } = listener();
    await router.execute({ model: ALIAS, body: body(false), stream: false, observer });
    expect(heard[0]).toMatchObject({ kind: 'skipped', attempt: { target: 'a/m1', outcome: 'skipped' } });
    expect(heard.slice(1).map((h) => h.kind)).toEqual(['started', 'ended', 'published']);
    expect(a.count()).toBe(0);
  });

  it('hears a committed stream end after its publication, with the finish reasons and usage its events carried', async () => {
    a.on('m1', { kind: 'answer', content: 'one two three', chunks: 3, usage: { prompt_tokens: 5, completion_tokens: 4 }, finishReason: 'length' });
    const router = start(['a/m1']);
    const { observer, heard } = listener();
    const result = (await router.execute({ model: ALIAS, body: { ...body(true), stream_options: { include_usage: true } }, stream: true, observer })) as StreamResult;
    // Committed: the call's end is its first content delta, with the answer's id and model.
    expect(heard.map((h) => h.kind)).toEqual(['started', 'ended', 'published']);
    expect(heard[1]).toMatchObject({ outcome: 'ok', answer: { model: 'm1', finishReasons: [] } });
    for await (const event of result.events) expect(typeof event).toBe('string');
    expect(heard.map((h) => h.kind)).toEqual(['started', 'ended', 'published', 'stream ended']);
    expect(heard[3]).toMatchObject({ summary: { end: 'complete', finishReasons: ['length'], usage: { prompt_tokens: 5, completion_tokens: 4 } } });
  });

  it('hears a stream the consumer left early end as cancelled', async () => {
    a.on('m1', { kind: 'answer', content: 'one two three four', chunks: 4, chunkIntervalMs: 50 });
    const router = start(['a/m1']);
    const { observer, heard } = listener();
    const result = (await router.execute({ model: ALIAS, body: body(true), stream: true, observer })) as StreamResult;
    await result.events[Symbol.asyncIterator]().return?.();
    expect(heard.at(-1)).toMatchObject({ kind: 'stream ended', summary: { end: 'cancelled' } });
  });

  it('goes on routing when the observer throws', async () => {
    const router = start(['a/m1']);
    const throwing: AttemptObserver = {
      callStarted: () => {
        throw new Error('observer broke');
      },
      skipped: () => {
        throw new Error('observer broke');
      },
    };
    const result = await router.execute({ model: ALIAS, body: body(false), stream: false, observer: throwing });
    expect(result.kind).toBe('json');
  });
});
