/**
 * One caller's response schemas cannot stall another's: the built gateway
 * (default schema workers), a fake upstream on loopback, two keys, and the
 * openai SDK. Each of the busy key's schemas is inside every size bound yet
 * costs ~1 s of compiling (990 patterns like `[\s\S]{999}`), and each is
 * different, so none is found compiled. With one first-come queue the other
 * key's trivial schema waited behind all of them (4.7–7.4 s measured with six);
 * with a queue per caller served in turn, and a worker a caller cannot take,
 * it starts at once.
 */
import { setMaxListeners } from 'node:events';
import OpenAI, { APIError } from 'openai';
import { Agent, fetch as undiciFetch } from 'undici';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliasesYaml, spawnGateway, type GatewayProcess } from './harness.js';

const BUSY_KEY = 'sk-gw-busy-caller';
const OTHER_KEY = 'sk-gw-other-caller';

/**
 * How long the other key's whole request may take while the busy key's
 * schemas keep a worker busy: one job budget. The documented bound is that
 * its jobs start at once, so what it takes is its own work (~120 ms measured
 * on two cores at a load average of 12). One first-come queue made it wait
 * for the six compiles of ~1 s each first: 16–18 s at that load.
 */
const OTHER_BOUND_MS = 2_000;

let cloud: FakeUpstream;
let gw: GatewayProcess;
let config: string;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('json', { kind: 'answer', content: '{"ok":true}' });
  config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "sk-e2e-fairness" }\n` +
    aliasesYaml({ 'mana/structured': ['cloud/json'] }, ['cloud/json']).replace('  mana/structured:\n', '  mana/structured:\n    fail_over_on: [empty, invalid_json]\n');
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: `${BUSY_KEY},${OTHER_KEY}` } });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

function client(apiKey: string, on: GatewayProcess = gw): OpenAI {
  // No retries: a 429 is what the test looks at, not something to hide.
  return new OpenAI({ apiKey, baseURL: `${on.url}/v1`, maxRetries: 0, timeout: 120_000 });
}

/** A client without a key whose connections come from `address` (another loopback address: another client to the gateway). */
function clientFrom(address: string, on: GatewayProcess): { openai: OpenAI; close: () => Promise<void> } {
  const dispatcher = new Agent({ localAddress: address });
  const openai = new OpenAI({
    apiKey: 'unused',
    baseURL: `${on.url}/v1`,
    maxRetries: 0,
    timeout: 120_000,
    fetch: ((url: string, init: Parameters<typeof undiciFetch>[1]) => undiciFetch(url, { ...init, dispatcher })) as unknown as typeof fetch,
  });
  return { openai, close: () => dispatcher.close() };
}

/** ~1 s of compiling, inside the bounds (990 objects with patterns, ~55 KB), different per `seed`. */
function costly(seed: number): Record<string, unknown> {
  const properties = Object.fromEntries(Array.from({ length: 990 }, (_, i) => [`s${seed}_${i}`, { type: 'string', pattern: `[\\s\\S]{${990 + (i % 9)}}` }]));
  return { type: 'object', properties };
}

function ask(openai: OpenAI, schema: Record<string, unknown>, signal?: AbortSignal): Promise<OpenAI.ChatCompletion> {
  return openai.chat.completions.create(
    {
      model: 'mana/structured',
      messages: [{ role: 'user', content: 'answer' }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
    },
    signal === undefined ? {} : { signal },
  );
}

/** Resolves once the gateway has `n` requests in flight (its own metric, polled). */
async function inFlight(on: GatewayProcess, n: number): Promise<void> {
  for (;;) {
    const text = await (await fetch(`${on.url}/metrics`)).text();
    const value = Number(/^mana_llm_in_flight_requests (\d+)/m.exec(text)?.[1] ?? 0);
    if (value >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Six costly schemas from `busy`, and once all six are in the gateway one
 * trivial `json_schema` request from `other`: it ends within the bound, while
 * most of the six are still running.
 */
async function busyAndOther(on: GatewayProcess, busy: OpenAI, other: OpenAI): Promise<void> {
  // The workers start with the first schema (a one-off ~0.1–1 s of loading): not what is measured here.
  await ask(other, { type: 'object' });
  let busyDone = 0;
  const attack = Array.from({ length: 6 }, (_, i) =>
    ask(busy, costly(i + 1)).then(
      (answer) => ((busyDone += 1), answer),
      (error: unknown) => ((busyDone += 1), error),
    ),
  );
  await inFlight(on, 6);
  const started = performance.now();
  const answer = await ask(other, { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] });
  const tookMs = performance.now() - started;
  const busyDoneBefore = busyDone;
  expect(answer.choices[0]?.message.content).toBe('{"ok":true}');
  expect(tookMs).toBeLessThan(OTHER_BOUND_MS);
  // The attack was still running: most of the busy caller's requests ended after the other's.
  expect(busyDoneBefore).toBeLessThanOrEqual(2);
  // Each costly request compiled (200) or, on a machine too busy to do it within 2 s, was refused as too large.
  for (const outcome of await Promise.all(attack)) {
    if (outcome instanceof APIError) expect([outcome.status, outcome.code]).toEqual([400, 'schema_too_large']);
    else expect((outcome as OpenAI.ChatCompletion).choices[0]?.message.content).toBe('{"ok":true}');
  }
}

describe('schema checks are shared fairly between callers', () => {
  it("six costly schemas of one key leave another key's trivial json_schema request under the bound", { timeout: 180_000 }, async () => {
    expect(JSON.stringify(costly(1)).length).toBeLessThanOrEqual(64 * 1024);
    await busyAndOther(gw, client(BUSY_KEY), client(OTHER_KEY));
  });

  it('with keys off, callers are told apart by address: the same bound between two client addresses', { timeout: 180_000 }, async () => {
    const open = await spawnGateway({ config });
    const busy = clientFrom('127.0.0.2', open);
    const other = clientFrom('127.0.0.3', open);
    try {
      await busyAndOther(open, busy.openai, other.openai);
    } finally {
      await Promise.all([busy.close(), other.close(), open.stop()]);
    }
  });

  it("a key with its queue full gets 429 schema_checks_busy before any upstream call; another key is still served", { timeout: 180_000 }, async () => {
    const busy = client(BUSY_KEY);
    const other = client(OTHER_KEY);
    const gone = new AbortController();
    setMaxListeners(50, gone.signal); // one per request of the flood
    let firstRefusal: (error: APIError) => void = () => {};
    const refusal = new Promise<APIError>((resolve) => (firstRefusal = resolve));
    // One running and 32 waiting fill the busy key's share; the rest arrive while they wait.
    const flood = Array.from({ length: 40 }, (_, i) =>
      ask(busy, costly(100 + i), gone.signal).catch((error: unknown) => {
        if (error instanceof APIError && error.status === 429) firstRefusal(error);
        return error;
      }),
    );
    const error = await Promise.race([refusal, Promise.all(flood).then(() => undefined)]);
    expect(error).toBeInstanceOf(APIError);
    expect(error?.status).toBe(429);
    expect(error?.code).toBe('schema_checks_busy');
    expect(error?.type).toBe('rate_limit_error');
    expect(error?.param).toBe('response_format');
    expect(error?.headers?.get('retry-after')).toBe('2');
    expect(error?.message).toContain('Too many response schemas of this caller are waiting to be checked');
    // Another key has a queue of its own.
    const answer = await ask(other, { type: 'object' });
    expect(answer.choices[0]?.message.content).toBe('{"ok":true}');
    // The busy key's clients go away: their waiting jobs leave the queue, and the gateway serves on.
    gone.abort();
    await Promise.all(flood);
    const after = await ask(other, { type: 'object', required: ['ok'] });
    expect(after.choices[0]?.message.content).toBe('{"ok":true}');
  });
});
