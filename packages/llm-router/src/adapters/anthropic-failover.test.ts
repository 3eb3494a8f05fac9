import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import { failure } from '../test-support.js';
import type { JsonResult, RouterResult, StreamResult, UpstreamErrorResult } from '../types.js';

/**
 * How Anthropic's failures are classified: each is a real answer of the fake
 * on loopback, and the chain `anthropic/claude → backup/m` shows whether the
 * router moved on, cooled the target down or relayed the refusal.
 */

const KEY = 'sk-ant-failover-0123456789';

let claude: FakeUpstream;
let backup: FakeUpstream;
let router: Router;

function anthropicRouter(env: Record<string, string> = { ANTHROPIC_API_KEY: KEY }): Router {
  const config = parseConfig(
    `providers:
  anthropic: { base_url: "${claude.url}" }
  backup: { type: openai, base_url: "${backup.baseUrl}", api_key: "sk-backup" }
aliases:
  mana/reasoning: [anthropic/claude-sonnet-4-5, backup/m]
  mana/long-form: [anthropic/claude-sonnet-4-5]
${otherAliases('mana/reasoning').replace('  mana/long-form: [ollama/gemma3:4b]\n', '')}`,
    { env },
  );
  return createRouter({ config });
}

beforeAll(async () => {
  [claude, backup] = await Promise.all([startFakeAnthropic({ apiKey: KEY }), startFakeOpenAI({ name: 'backup' })]);
});
afterAll(async () => {
  await Promise.all([claude.close(), backup.close()]);
});
afterEach(async () => {
  await router?.close();
  claude.reset();
  backup.reset();
});

const ask = (model = 'mana/reasoning', body: Record<string, unknown> = {}): Promise<RouterResult> =>
  router.execute({ model, body: { messages: [{ role: 'user', content: 'hi' }], ...body }, stream: false });

const trail = (result: { outcome: { attempts: readonly { target: string; outcome: string; reason: string }[] } }) =>
  result.outcome.attempts.map((a) => `${a.target}:${a.outcome}:${a.reason}`);

describe('anthropic failures', () => {
  it('529 overloaded_error fails over like a 5xx and cools the target down', async () => {
    router = anthropicRouter();
    claude.on('claude-sonnet-4-5', { kind: 'status', status: 529 });
    const result = (await ask()) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:failed:http_529', 'backup/m:ok:ok']);
    expect(result.body).toMatchObject({ choices: [{ message: { content: 'Hello from m via backup' } }] });
    const next = (await ask()) as JsonResult;
    expect(trail(next)).toEqual(['anthropic/claude-sonnet-4-5:skipped:cooling_down', 'backup/m:ok:ok']);
  });

  it('429 honours retry-after: the target cools down for that long', async () => {
    router = anthropicRouter();
    claude.on('claude-sonnet-4-5', { kind: 'status', status: 429, headers: { 'retry-after': '120' } });
    const before = Date.now();
    const result = (await ask()) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:failed:http_429', 'backup/m:ok:ok']);
    const target = router.aliases().find((a) => a.alias === 'mana/reasoning')!.chain[0]!;
    expect(target.state).toBe('cooling_down');
    const until = Date.parse(target.until!);
    expect(until).toBeGreaterThanOrEqual(before + 119_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 121_000);
  });

  it.each([
    ['prompt is too long: 208310 tokens > 200000 maximum'],
    ['input length and `max_tokens` exceed context limit: 178959 + 64000 > 200000, decrease input length or `max_tokens` and try again'],
  ])('the context-length 400 "%s" fails over as context_length', async (message) => {
    router = anthropicRouter();
    claude.on('claude-sonnet-4-5', { kind: 'status', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } });
    const result = (await ask()) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:failed:context_length', 'backup/m:ok:ok']);
    expect(result.outcome.attempts[0]).toMatchObject({ status: 400 });
  });

  it('another 400 is the request at fault: relayed as Anthropic wrote it, our key cut out', async () => {
    router = anthropicRouter();
    const body = { type: 'error', error: { type: 'invalid_request_error', message: `messages.0.content: bad block (key ${KEY})` } };
    claude.on('claude-sonnet-4-5', { kind: 'status', status: 400, body });
    const result = (await ask()) as UpstreamErrorResult;
    expect(result.kind).toBe('upstream_error');
    expect(result.status).toBe(400);
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:rejected:http_400']);
    expect(result.body).not.toContain(KEY);
    expect(JSON.parse(result.body)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content: bad block (key [redacted])' } });
    expect(backup.count()).toBe(0);
  });

  it('a 401 (bad key) fails over and the next target answers', async () => {
    router = anthropicRouter({ ANTHROPIC_API_KEY: 'sk-ant-wrong-key-000' });
    const result = (await ask()) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:failed:http_401', 'backup/m:ok:ok']);
  });

  it('an overloaded error event before the first delta fails the stream over', async () => {
    router = anthropicRouter();
    claude.on('claude-sonnet-4-5', { kind: 'answer', errorEventAfterChunks: 0 });
    const result = (await router.execute({ model: 'mana/reasoning', body: { messages: [{ role: 'user', content: 'hi' }], stream: true }, stream: true })) as StreamResult;
    const text: string[] = [];
    for await (const data of result.events) text.push(JSON.parse(data).choices[0]?.delta?.content ?? '');
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:failed:stream_error', 'backup/m:ok:ok']);
    expect(text.join('')).toBe('Hello from m via backup');
  });

  it('without ANTHROPIC_API_KEY the target is unconfigured: skipped without a call', async () => {
    router = anthropicRouter({});
    const result = (await ask()) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:skipped:unconfigured: missing api key (ANTHROPIC_API_KEY)', 'backup/m:ok:ok']);
    expect(claude.count()).toBe(0);
    expect(router.aliases().find((a) => a.alias === 'mana/reasoning')!.chain[0]).toMatchObject({ state: 'unconfigured', reason: 'missing api key (ANTHROPIC_API_KEY)' });
  });
});

describe('what Anthropic cannot honour skips the target before any call', () => {
  it.each([
    ['n', { n: 2 }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['seed', { seed: 7 }],
    ['temperature', { temperature: 1.5 }],
    ['stop', { stop: ['\n'] }],
    ['logprobs', { logprobs: true }],
  ])('%s', async (param, body) => {
    router = anthropicRouter();
    const result = (await ask('mana/reasoning', body)) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:skipped:unsupported_parameter', 'backup/m:ok:ok']);
    expect(result.outcome.attempts[0]!.detail).toBe(`anthropic cannot honour \`${param}\``);
    expect(claude.count()).toBe(0);
    // A chain of anthropic targets only: the caller's 400, naming the parameter.
    const error = await failure(ask('mana/long-form', body));
    expect(error).toMatchObject({ code: 'unsupported_parameter', param });
  });

  it('an image that is not a base64 data: or http(s) URL is unsupported_request', async () => {
    router = anthropicRouter();
    const messages = [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png,rawbytes' } }] }];
    const result = (await ask('mana/reasoning', { messages })) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:skipped:unsupported_request', 'backup/m:ok:ok']);
    expect(claude.count()).toBe(0);
  });
});
