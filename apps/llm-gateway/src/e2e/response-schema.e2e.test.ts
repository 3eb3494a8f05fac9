/**
 * A client's `response_format` JSON Schema cannot stall the gateway: the built
 * process, a fake OpenAI-compatible upstream, and `/healthz` timed while the
 * schema requests run. A schema is compiled only for an alias that checks
 * answers (`fail_over_on: [invalid_json]`), off the event loop, within size
 * bounds, and its patterns are matched in linear time.
 */
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

/** What a stalled event loop looks like from outside: `/healthz` slower than this. */
const HEALTHZ_BOUND_MS = 1_000;

let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  // A JSON string of 28 `a`s and a `!`: JavaScript's RegExp needs ~10 s (and doubles per `a`) to refuse it for ^(a+)+$.
  cloud.on('backtrack', { kind: 'answer', content: JSON.stringify(`${'a'.repeat(28)}!`) });
  cloud.on('json', { kind: 'answer', content: '"aaa"' });
  cloud.on('plain', { kind: 'answer', content: 'hello' });
  const config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "sk-e2e-schema" }\n` +
    aliasesYaml({ 'mana/structured': ['cloud/backtrack', 'cloud/json'], 'mana/fast-text': ['cloud/plain'] }, ['cloud/plain']).replace(
      '  mana/structured:\n',
      '  mana/structured:\n    fail_over_on: [empty, invalid_json]\n',
    );
  gw = await spawnGateway({ config });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

function chat(model: string, schema: unknown): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'answer' }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
    }),
    // A stalled gateway fails the test here rather than at the runner's timeout.
    signal: AbortSignal.timeout(15_000),
  });
}

/**
 * Runs `work` while timing `/healthz` every 50 ms; returns what `work` returned
 * and the slowest `/healthz` (a request that did not answer within 5 s counts as 5 s).
 */
async function whileTimingHealthz<T>(work: () => Promise<T>): Promise<{ result: T; slowestMs: number }> {
  let done = false;
  let slowestMs = 0;
  const poll = (async () => {
    while (!done) {
      const started = performance.now();
      try {
        await (await fetch(`${gw.url}/healthz`, { signal: AbortSignal.timeout(5_000) })).text();
      } catch {
        // timed out: counted below as the time waited
      }
      slowestMs = Math.max(slowestMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  let result: T;
  try {
    result = await work();
  } finally {
    done = true;
    await poll;
  }
  return { result, slowestMs };
}

/** A distinct schema of ~150 KB per `seed`: 150 object properties of 10 described strings each (~1,650 objects). */
function largeSchema(seed: number): Record<string, unknown> {
  const leaf = (i: number, j: number) => ({ type: 'string', description: `field ${seed}.${i}.${j} ${'of the generated form '.repeat(3)}` });
  const properties = Object.fromEntries(
    Array.from({ length: 150 }, (_, i) => [
      `section_${seed}_${i}`,
      { type: 'object', properties: Object.fromEntries(Array.from({ length: 10 }, (_, j) => [`f${j}`, leaf(i, j)])) },
    ]),
  );
  return { type: 'object', properties };
}

describe('response_format schemas through the gateway', () => {
  it('a backtracking pattern against the answer fails over at once (RE2), and /healthz keeps answering', async () => {
    const started = performance.now();
    const { result: res, slowestMs } = await whileTimingHealthz(() => chat('mana/structured', { type: 'string', pattern: '^(a+)+$' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/json');
    const body = (await res.json()) as Json;
    expect(body.choices[0].message.content).toBe('"aaa"');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(slowestMs).toBeLessThan(HEALTHZ_BOUND_MS);
  });

  it('a pattern RE2 cannot run (lookahead) is a 400 invalid_schema saying why, before any upstream call', async () => {
    const calls = cloud.count();
    const res = await chat('mana/structured', { type: 'string', pattern: '^(?=a)a+$' });
    expect(res.status).toBe(400);
    const error = ((await res.json()) as Json).error;
    expect(error).toMatchObject({ code: 'invalid_schema', type: 'invalid_request_error', param: 'response_format' });
    expect(error.message).toContain('is not supported: patterns are matched with RE2');
    expect(cloud.count()).toBe(calls);
  });

  it('large schemas on an alias that does not check answers are passed on untouched: five in parallel, /healthz unaffected', async () => {
    const schemas = Array.from({ length: 5 }, (_, i) => largeSchema(i));
    expect(JSON.stringify(schemas[0]).length).toBeGreaterThan(140_000);
    const { result: answers, slowestMs } = await whileTimingHealthz(() => Promise.all(schemas.map((schema) => chat('mana/fast-text', schema))));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
    expect(slowestMs).toBeLessThan(HEALTHZ_BOUND_MS);
    // The upstream got the schema as the client sent it.
    const sent = cloud.requests.filter((r) => r.model === 'plain').at(-1)!.body as Json;
    expect(schemas).toContainEqual(sent.response_format.json_schema.schema);
  });

  it.each([
    ['over 64 KiB of JSON text', { type: 'object', description: 'x'.repeat(70_000) }, '65536'],
    ['over 1,000 objects', { anyOf: Array.from({ length: 1_001 }, () => ({})) }, 'more than 1000 objects'],
  ])('a schema %s on an alias that checks answers → 400 schema_too_large, nothing sent', async (_name, schema, says) => {
    const calls = cloud.count();
    const res = await chat('mana/structured', schema);
    expect(res.status).toBe(400);
    const error = ((await res.json()) as Json).error;
    expect(error).toMatchObject({ code: 'schema_too_large', type: 'invalid_request_error', param: 'response_format' });
    expect(error.message).toContain(says);
    expect(cloud.count()).toBe(calls);
  });

  it('schemas that are slow to compile, on an alias that checks answers, do not stall /healthz', async () => {
    // Within the bounds: 990 subschemas and a 4,500-value enum (~60 KB) each, hundreds of ms of compiling.
    const heavy = (seed: number) => ({
      anyOf: [...Array.from({ length: 990 }, () => ({ type: 'null' })), { type: 'string', enum: Array.from({ length: 4_500 }, (_, i) => `v${seed}_${i}`) }],
    });
    expect(JSON.stringify(heavy(3)).length).toBeLessThanOrEqual(64 * 1024);
    const { result: answers, slowestMs } = await whileTimingHealthz(() => Promise.all([1, 2, 3].map((seed) => chat('mana/structured', heavy(seed)))));
    // Each compiles (the answers "aaa…!" and "aaa" are no enum value: invalid_json on both targets),
    // or, on a machine too busy to compile it within the budget, is refused as too large.
    for (const res of answers) {
      const error = ((await res.json()) as Json).error;
      expect([error.code, res.status]).toSatisfy(
        ([code, status]: [string, number]) => (code === 'upstream_failed' && status === 502) || (code === 'schema_too_large' && status === 400),
      );
    }
    expect(slowestMs).toBeLessThan(HEALTHZ_BOUND_MS);
  });
});
