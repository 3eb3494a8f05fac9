import { startFakeOllama, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import { failure } from '../test-support.js';
import type { ChatRequestBody } from '../types.js';

/** Targets that cannot take a request (or honour one of its parameters) are skipped before any call, and never counted as upstream calls. */

let local: FakeUpstream;
let cloud: FakeUpstream;
let router: Router | undefined;

beforeAll(async () => {
  [local, cloud] = await Promise.all([startFakeOllama({ host: '127.0.0.1' }), startFakeOpenAI({ host: '127.0.0.1' })]);
});
afterAll(async () => {
  await Promise.all([local.close(), cloud.close()]);
});
afterEach(async () => {
  await router?.close();
  router = undefined;
  local.reset();
  cloud.reset();
});

function start(chain: readonly string[]): Router {
  const config = parseConfig(
    `providers:
  local: { type: ollama, base_url: "${local.url}" }
  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }
aliases:
  mana/vision: [${chain.join(', ')}]
${otherAliases('mana/vision')}`,
    { env: {} },
  );
  router = createRouter({ config });
  return router;
}

const remoteImage: ChatRequestBody = {
  messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.invalid/cat.png' } }] }],
};

describe('a target that cannot express the request', () => {
  it('is skipped (no upstream call) and the next target answers', async () => {
    const result = await start(['local/llava', 'cloud/gpt']).execute({ model: 'mana/vision', body: remoteImage, stream: false });
    expect(result.outcome.attempts.map((x) => `${x.target}:${x.outcome}:${x.reason}`)).toEqual([
      'local/llava:skipped:unsupported_request',
      'cloud/gpt:ok:ok',
    ]);
    expect(result.outcome.upstreamCalls).toBe(1);
    expect(local.count()).toBe(0);
  });

  it('when every target refuses, the request ends in unsupported_request with no upstream call', async () => {
    const error = await failure(start(['local/llava', 'local/gemma3']).execute({ model: 'mana/vision', body: remoteImage, stream: false }));
    expect(error.code).toBe('unsupported_request');
    expect(error.outcome).toMatchObject({ alias: 'mana/vision', upstreamCalls: 0 });
    expect(error.outcome.attempts.map((x) => x.reason)).toEqual(['unsupported_request', 'unsupported_request']);
    expect(local.count()).toBe(0);
  });
});

describe('a target that cannot honour a request parameter', () => {
  const hi = [{ role: 'user', content: 'hi' }];

  it('is skipped (no upstream call) and the next target answers, with the parameter passed on', async () => {
    const result = await start(['local/llava', 'cloud/gpt']).execute({ model: 'mana/vision', body: { messages: hi, n: 2 }, stream: false });
    expect(result.outcome.attempts).toEqual([
      expect.objectContaining({ target: 'local/llava', outcome: 'skipped', reason: 'unsupported_parameter', detail: 'ollama cannot honour `n`' }),
      expect.objectContaining({ target: 'cloud/gpt', outcome: 'ok' }),
    ]);
    expect(result.outcome.upstreamCalls).toBe(1);
    expect(local.count()).toBe(0);
    expect(cloud.requests[0]!.body).toMatchObject({ n: 2 });
  });

  it('when no target can, the request ends in unsupported_parameter naming it, with no upstream call', async () => {
    const r = start(['local/llava', 'local/gemma3']);
    for (const [param, extra] of [
      ['logprobs', { logprobs: true }],
      ['top_logprobs', { top_logprobs: 3 }],
      ['tool_choice', { tool_choice: 'required' }],
      ['tool_choice', { tool_choice: { type: 'function', function: { name: 'f' } } }],
      ['n', { n: 3 }],
    ] as const) {
      const error = await failure(r.execute({ model: 'mana/vision', body: { messages: hi, ...extra }, stream: false }));
      expect(error).toMatchObject({ code: 'unsupported_parameter', param, outcome: { upstreamCalls: 0 } });
      expect(error.outcome.attempts.map((x) => `${x.target}:${x.reason}`)).toEqual(['local/llava:unsupported_parameter', 'local/gemma3:unsupported_parameter']);
    }
    expect(local.count()).toBe(0);
  });

  it('values that ask for nothing pass, and tool_choice none is honoured by offering no tools', async () => {
    const r = start(['local/llava']);
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const body = { messages: hi, n: 1, logprobs: false, top_logprobs: null, tools, tool_choice: 'none' };
    const result = await r.execute({ model: 'mana/vision', body, stream: false });
    expect(result.outcome.target).toBe('local/llava');
    expect(local.requests[0]!.body).not.toHaveProperty('tools');
    await r.execute({ model: 'mana/vision', body: { messages: hi, tools, tool_choice: 'auto' }, stream: false });
    expect(local.requests[1]!.body).toHaveProperty('tools');
  });
});
