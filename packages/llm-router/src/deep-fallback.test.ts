/**
 * Deep fallback through the router against loopback fakes: context fit before
 * the call, upstream context-length errors, and 200 answers that are no use
 * (content filter, refusal, invalid JSON) failing over per alias.
 */
import { readFileSync } from 'node:fs';
import { startFakeOllama, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from './config/load-config.js';
import { otherAliases } from './config/test-configs.js';
import { createRouter, type Router } from './router.js';
import { failure, useFakePair } from './test-support.js';
import type { JsonResult, RouterRequest, RouterResult } from './types.js';

const ALIAS = 'mana/structured';
const fakes = useFakePair({ names: ['a', 'b'] });
let a: FakeUpstream;
let b: FakeUpstream;
let ollama: FakeUpstream;

beforeAll(async () => {
  ({ a, b } = fakes);
  ollama = await startFakeOllama({ host: '127.0.0.1' });
});
afterEach(() => ollama.reset());
afterAll(() => ollama.close());

const fixtures = JSON.parse(readFileSync(new URL('./attempt/fixtures/context-length-errors.json', import.meta.url), 'utf8')) as {
  contextLength: { provider: string; status: number; body: string }[];
};
const llamaCpp400 = fixtures.contextLength.find((f) => f.provider === 'llama.cpp' && f.status === 400)!;

function start(alias: string, providers = ''): Router {
  const text = `
settings: { connect_timeout: 1s, first_byte_timeout: 5s }
providers:
  a: { type: openai, base_url: "${a.baseUrl}", api_key: "ka" }
  b: { type: openai, base_url: "${b.baseUrl}", api_key: "kb" }
  local: { type: ollama, base_url: "${ollama.baseUrl}", options: { num_ctx: 300 }, settings: { context_reserve: 50 } }
${providers}
aliases:
  ${ALIAS}:
${alias}
${otherAliases(ALIAS)}`;
  return fakes.use(createRouter({ config: parseConfig(text, { source: 'test', env: {} }) }));
}

const words = (n: number): string => Array.from({ length: n }, (_, i) => `word${i % 10}`).join(' ');

function ask(r: Router, body: Record<string, unknown> = {}, extra: Partial<RouterRequest> = {}): Promise<RouterResult> {
  return r.execute({
    model: ALIAS,
    body: { model: ALIAS, messages: [{ role: 'user', content: 'hi' }], ...body },
    stream: body.stream === true,
    ...extra,
  });
}

function json(result: RouterResult): JsonResult {
  expect(result.kind).toBe('json');
  return result as JsonResult;
}

const reasons = (result: { outcome: { attempts: readonly { target: string; outcome: string; reason: string }[] } }) =>
  result.outcome.attempts.map((x) => `${x.target}:${x.outcome}:${x.reason}`);

describe('context fit before the call', () => {
  it('skips a local target whose num_ctx the prompt exceeds, without calling it; the next target answers', async () => {
    const r = start('    chain: [local/small, a/m1]');
    const result = json(await ask(r, { messages: [{ role: 'user', content: words(400) }] }));
    expect(result.outcome.target).toBe('a/m1');
    expect(reasons(result)).toEqual(['local/small:skipped:context_too_small', 'a/m1:ok:ok']);
    expect(result.outcome.attempts[0]!.detail).toMatch(/^needs ~\d+ tokens, context window 300$/);
    expect(result.outcome.attempts[0]!.failedOver).toBe(true);
    expect(result.outcome.upstreamCalls).toBe(1);
    expect(ollama.count('small')).toBe(0);
  });

  it('a prompt that fits goes to the local target, which is sent the num_ctx it was checked against', async () => {
    const r = start('    chain: [local/small, a/m1]');
    json(await ask(r));
    expect(ollama.count('small')).toBe(1);
    expect((ollama.requests.at(-1)!.body as { options: { num_ctx: number } }).options.num_ctx).toBe(300);
    expect(a.count()).toBe(0);
  });

  it('max_tokens counts against the window: a short prompt with a large answer budget skips the small target', async () => {
    const r = start('    chain: [local/small, a/m1]');
    const result = json(await ask(r, { max_tokens: 295 }));
    expect(reasons(result)[0]).toBe('local/small:skipped:context_too_small');
  });

  it('context_window on an OpenAI-compatible target (target level) is checked too; none fits → 400 context_length_exceeded', async () => {
    const r = start(
      '    chain:\n      - local/small\n      - { target: a/m1, settings: { context_window: 200 } }',
    );
    const error = await failure(ask(r, { messages: [{ role: 'user', content: words(400) }] }));
    expect(error.code).toBe('context_length_exceeded');
    expect(reasons(error)).toEqual(['local/small:skipped:context_too_small', 'a/m1:skipped:context_too_small']);
    expect(error.message).toMatch(/~\d+ prompt tokens estimated/);
    expect(error.message).toContain('context window 300');
    expect(error.message).toContain('context window 200');
    expect(ollama.count('small') + a.count()).toBe(0);
  });

  it('a target without a context window is never skipped for size', async () => {
    const r = start('    chain: [a/m1]');
    json(await ask(r, { messages: [{ role: 'user', content: words(20_000) }] }));
    expect(a.count()).toBe(1);
  });
});

describe('upstream context-length errors', () => {
  it('a llama.cpp exceed_context_size_error 400 fails over to the next target', async () => {
    a.on('m1', { kind: 'status', status: 400, body: llamaCpp400.body });
    const result = json(await ask(start('    chain: [a/m1, b/m2]')));
    expect(result.outcome.target).toBe('b/m2');
    expect(result.outcome.attempts[0]).toMatchObject({ target: 'a/m1', outcome: 'failed', reason: 'context_length', status: 400, failedOver: true });
    expect(result.outcome.upstreamCalls).toBe(2);
  });

  it('any other 400 is still relayed unchanged, and nothing behind it is called', async () => {
    a.on('m1', { kind: 'status', status: 400, body: { error: { message: 'Invalid max_tokens value', code: 'invalid_value' } } });
    const result = await ask(start('    chain: [a/m1, b/m2]'));
    expect(result.kind).toBe('upstream_error');
    expect(b.count()).toBe(0);
  });

  it('fail_over_on_context_length: false relays the context-length 400', async () => {
    a.on('m1', { kind: 'status', status: 400, body: llamaCpp400.body });
    const result = await ask(start('    fail_over_on_context_length: false\n    chain: [a/m1, b/m2]'));
    expect(result.kind).toBe('upstream_error');
    if (result.kind === 'upstream_error') expect(result.body).toBe(llamaCpp400.body);
    expect(b.count()).toBe(0);
  });

  it('every target saying so → 400 context_length_exceeded', async () => {
    a.on('m1', { kind: 'status', status: 400, body: llamaCpp400.body });
    b.on('m2', { kind: 'status', status: 400, body: fixtures.contextLength[0]!.body });
    const error = await failure(ask(start('    chain: [a/m1, b/m2]')));
    expect(error.code).toBe('context_length_exceeded');
    expect(reasons(error)).toEqual(['a/m1:failed:context_length', 'b/m2:failed:context_length']);
  });
});

const SCHEMA = {
  type: 'json_schema',
  json_schema: { name: 'x', schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
};

describe('fail_over_on: content that is no use', () => {
  const listed = '    fail_over_on: [empty, content_filter, refusal, invalid_json]\n    chain: [a/m1, b/m2]';
  const notListed = '    chain: [a/m1, b/m2]';
  /** Each useless 200: the reason it fails over with when listed, the fake's behaviour, the request's extra fields. */
  const USELESS_ANSWERS = [
    ['content_filter', { kind: 'answer', content: 'partial', finishReason: 'content_filter' }, {}],
    ['refusal', { kind: 'answer', refusal: "I can't help with that." }, {}],
    ['invalid_json', { kind: 'answer', content: 'Sure! Here is your JSON: {"n": 1}' }, { response_format: { type: 'json_object' } }],
    ['invalid_json', { kind: 'answer', content: '{"n": "one"}' }, { response_format: SCHEMA }],
  ] as const;

  it.each(USELESS_ANSWERS)('%s fails over when listed', async (reason, behavior, body) => {
    a.on('m1', behavior);
    b.on('m2', { kind: 'answer', content: '{"n": 2}' });
    const result = json(await ask(start(listed), body));
    expect(result.outcome.target).toBe('b/m2');
    expect(result.outcome.attempts[0]).toMatchObject({ target: 'a/m1', outcome: 'failed', reason, failedOver: true });
    expect(result.outcome.attempts[0]!.detail).not.toContain('Sure!'); // the content itself is never echoed
  });

  it.each(USELESS_ANSWERS)('%s is relayed when not listed', async (_reason, behavior, body) => {
    a.on('m1', behavior);
    const result = json(await ask(start(notListed), body));
    expect(result.outcome.target).toBe('a/m1');
    expect(b.count()).toBe(0);
  });

  it('JSON that parses and validates is relayed', async () => {
    a.on('m1', { kind: 'answer', content: '{"n": 7}' });
    const result = json(await ask(start(listed), { response_format: SCHEMA }));
    expect(result.outcome.target).toBe('a/m1');
  });

  it('every target answering invalid JSON → upstream_failed listing invalid_json for each', async () => {
    a.on('m1', { kind: 'answer', content: 'nope' });
    b.on('m2', { kind: 'answer', content: '{"n": 1.5}' });
    const error = await failure(ask(start(listed), { response_format: SCHEMA }));
    expect(error.code).toBe('upstream_failed');
    expect(reasons(error)).toEqual(['a/m1:failed:invalid_json', 'b/m2:failed:invalid_json']);
  });

  it('a json_schema that is not a valid schema → invalid_schema before any upstream call', async () => {
    const bad = { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'objekt' } } };
    const error = await failure(ask(start(listed), { response_format: bad }));
    expect(error.code).toBe('invalid_schema');
    expect(error.message).toContain('not a valid JSON Schema');
    const remote = { type: 'json_schema', json_schema: { name: 'x', schema: { $ref: 'https://example.com/s.json' } } };
    expect((await failure(ask(start(listed), { response_format: remote }))).code).toBe('invalid_schema');
    expect(a.count() + b.count()).toBe(0);
  });

  it('an alias that does not list invalid_json never looks at the schema: even an invalid one goes to the upstream as sent', async () => {
    const bad = { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'objekt' } } };
    a.on('m1', { kind: 'answer', content: 'prose' });
    const result = json(await ask(start(notListed), { response_format: bad }));
    expect(result.outcome.target).toBe('a/m1');
    expect((a.requests[0]!.body as { response_format: unknown }).response_format).toEqual(bad);
  });

  it('a schema past the size bounds on an alias that checks answers → schema_too_large before any upstream call', async () => {
    const huge = { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', description: 'x'.repeat(70_000) } } };
    const error = await failure(ask(start(listed), { response_format: huge }));
    expect({ code: error.code, param: error.param }).toEqual({ code: 'schema_too_large', param: 'response_format' });
    expect(a.count() + b.count()).toBe(0);
  });

  it('streams: a refusal or a content_filter stop before the first content delta fails over when listed', async () => {
    a.on('m1', [{ kind: 'answer', refusal: 'No.' }, { kind: 'answer', content: '', finishReason: 'content_filter' }]);
    const r = start(listed);
    for (const reason of ['refusal', 'content_filter']) {
      const result = await ask(r, { stream: true });
      expect(result.kind).toBe('stream');
      expect(result.outcome.target).toBe('b/m2');
      expect(result.outcome.attempts[0]).toMatchObject({ reason, outcome: 'failed' });
      if (result.kind === 'stream') for await (const _ of result.events) void _;
    }
  });

  it('streams: a refusal is relayed when not listed; invalid JSON is never checked on a stream', async () => {
    a.on('m1', [{ kind: 'answer', refusal: 'No.' }, { kind: 'answer', content: 'not json' }]);
    const r = start(notListed);
    const refused = await ask(r, { stream: true });
    expect(refused.outcome.target).toBe('a/m1');
    const chunks: string[] = [];
    if (refused.kind === 'stream') for await (const data of refused.events) chunks.push(data);
    const refusal = chunks.map((data) => (JSON.parse(data) as { choices: { delta: { refusal?: string } }[] }).choices[0]?.delta.refusal ?? '');
    expect(refusal.join('')).toBe('No.');
    const listedRouter = start(listed);
    a.on('m1', { kind: 'answer', content: 'not json' });
    const prose = await ask(listedRouter, { stream: true, response_format: { type: 'json_object' } });
    expect(prose.outcome.target).toBe('a/m1');
    if (prose.kind === 'stream') for await (const _ of prose.events) void _;
  });
});
