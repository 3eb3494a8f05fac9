import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load-config.js';
import { otherAliases } from '../config/test-configs.js';
import { createRouter, type Router } from '../router.js';
import { failure } from '../test-support.js';
import type { JsonResult, RouterRequest, StreamResult } from '../types.js';

/**
 * Optional request parameters (RouterRequest.optionalParameters) against real
 * upstreams on loopback: `anthropic/claude → backup/m`, where the Anthropic
 * protocol cannot honour `reasoning_effort` (anthropic-parameters.ts). Marked
 * optional, it is dropped for that target, which then answers, and the
 * attempt says so; not marked, the target is skipped as before.
 */

const KEY = 'sk-ant-optional-0123456789';

let claude: FakeUpstream;
let backup: FakeUpstream;
let router: Router;

beforeAll(async () => {
  [claude, backup] = await Promise.all([startFakeAnthropic({ apiKey: KEY }), startFakeOpenAI({ name: 'backup' })]);
  const config = parseConfig(
    `providers:
  anthropic: { base_url: "${claude.url}" }
  backup: { type: openai, base_url: "${backup.baseUrl}", api_key: "sk-backup" }
  picky: { type: openai, base_url: "${backup.baseUrl}", api_key: "sk-backup", unsupported_parameters: [reasoning_effort] }
aliases:
  mana/reasoning: [anthropic/claude-sonnet-4-5, backup/m]
  mana/long-form: [anthropic/claude-sonnet-4-5]
  mana/fast-text: [backup/m]
  mana/structured: [picky/m]
  dropping: { settings: { hosted_tools: drop }, chain: [backup/m] }
  dropping-claude: { settings: { hosted_tools: drop }, chain: [anthropic/claude-sonnet-4-5] }
${otherAliases('mana/reasoning').replace('  mana/long-form: [ollama/gemma3:4b]\n', '').replace('  mana/fast-text: [ollama/gemma3:4b]\n', '').replace('  mana/structured: [ollama/gemma3:4b]\n', '')}`,
    { env: { ANTHROPIC_API_KEY: KEY } },
  );
  router = createRouter({ config });
});
afterAll(async () => {
  await router?.close();
  await Promise.all([claude.close(), backup.close()]);
});
afterEach(() => {
  claude.reset();
  backup.reset();
});

const request = (model: string, extra: Partial<RouterRequest> = {}, body: Record<string, unknown> = {}): RouterRequest => ({
  model,
  body: { messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'high', ...body },
  stream: false,
  ...extra,
});

const trail = (result: { outcome: { attempts: readonly { target: string; outcome: string; reason: string; detail?: string }[] } }) =>
  result.outcome.attempts.map((a) => `${a.target}:${a.outcome}:${a.reason}${a.detail === undefined ? '' : ` (${a.detail})`}`);

describe('optional parameters', () => {
  it('not marked optional, a parameter the protocol cannot honour skips the target', async () => {
    const result = (await router.execute(request('mana/reasoning'))) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:skipped:unsupported_parameter (anthropic cannot honour `reasoning_effort`)', 'backup/m:ok:ok']);
    expect(claude.requests).toHaveLength(0);
  });

  it('marked optional, it is dropped for that target, which answers; the attempt says what was dropped', async () => {
    const result = (await router.execute(request('mana/reasoning', { optionalParameters: ['reasoning_effort'] }))) as JsonResult;
    expect(trail(result)).toEqual(['anthropic/claude-sonnet-4-5:ok:ok (anthropic cannot honour `reasoning_effort`: sent without it (optional))']);
    expect(claude.requests).toHaveLength(1);
    expect(claude.requests[0]!.body).not.toHaveProperty('reasoning_effort');
    expect(backup.requests).toHaveLength(0);
  });

  it('a target that honours it gets it as sent', async () => {
    await router.execute(request('mana/fast-text', { optionalParameters: ['reasoning_effort'] }));
    expect(backup.requests.at(-1)!.body).toMatchObject({ reasoning_effort: 'high' });
  });

  it('an alias of only such targets answers instead of a 400 unsupported_parameter', async () => {
    const refused = await failure(router.execute(request('mana/long-form')));
    expect(refused).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning_effort' });
    const result = (await router.execute(request('mana/long-form', { optionalParameters: ['reasoning_effort'] }))) as JsonResult;
    expect(result.outcome.target).toBe('anthropic/claude-sonnet-4-5');
  });

  it('several optional parameters are all dropped; one that is not optional still skips the target', async () => {
    const both = (await router.execute(request('mana/reasoning', { optionalParameters: ['reasoning_effort', 'verbosity'] }, { verbosity: 'low' }))) as JsonResult;
    expect(both.outcome.attempts[0]!.detail).toBe('anthropic cannot honour `reasoning_effort`, `verbosity`: sent without it (optional)');
    const seeded = (await router.execute(request('mana/reasoning', { optionalParameters: ['reasoning_effort'] }, { seed: 7 }))) as JsonResult;
    expect(trail(seeded)).toEqual(['anthropic/claude-sonnet-4-5:skipped:unsupported_parameter (anthropic cannot honour `seed`)', 'backup/m:ok:ok']);
    expect(backup.requests.at(-1)!.body).toMatchObject({ reasoning_effort: 'high', seed: 7 });
  });

  it('a stream goes the same way', async () => {
    const result = (await router.execute(request('mana/reasoning', { optionalParameters: ['reasoning_effort'], stream: true }, { stream: true }))) as StreamResult;
    const events: string[] = [];
    for await (const event of result.events) events.push(event);
    expect(result.outcome.target).toBe('anthropic/claude-sonnet-4-5');
    expect(events.length).toBeGreaterThan(0);
    expect(result.outcome.attempts[0]!.detail).toContain('sent without it');
  });

  it("a provider's unsupported_parameters count as its protocol's: dropped when optional, else the target is skipped", async () => {
    const result = (await router.execute(request('mana/structured', { optionalParameters: ['reasoning_effort'] }))) as JsonResult;
    expect(trail(result)).toEqual(['picky/m:ok:ok (picky (unsupported_parameters) cannot honour `reasoning_effort`: sent without it (optional))']);
    expect(backup.requests.at(-1)!.body).not.toHaveProperty('reasoning_effort');
    const refused = await failure(router.execute(request('mana/structured')));
    expect(refused).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning_effort' });
    expect(refused.outcome.attempts[0]!.detail).toBe('picky (unsupported_parameters) cannot honour `reasoning_effort`');
    // A request without it is no concern of the declaration.
    const plain = (await router.execute(request('mana/structured', {}, { reasoning_effort: null }))) as JsonResult;
    expect(plain.outcome.target).toBe('picky/m');
  });

  it.each([['reasoning_effort'], ['[Reasoning-Effort]'], ['[messages]'], ['[1]']])('unsupported_parameters: %s is refused at load', (value) => {
    expect(() => parseConfig(`providers:\n  p: { type: openai, base_url: "http://127.0.0.1:1/v1", unsupported_parameters: ${value} }\n${otherAliases('')}`)).toThrow(/unsupported_parameters must be a list of chat request parameter names/);
  });

  describe('hosted tools (nativeOnly)', () => {
    const search = { param: 'tools[0].type', name: 'web_search', droppable: true } as const;

    it('a target that cannot offer one is skipped naming it; with none that can, unsupported_parameter names its param', async () => {
      const refused = await failure(router.execute(request('mana/fast-text', { nativeOnly: [search] }, { reasoning_effort: null })));
      expect(refused).toMatchObject({ code: 'unsupported_parameter', param: 'tools[0].type', outcome: { upstreamCalls: 0 } });
      expect(refused.outcome.attempts.map((a) => a.detail)).toEqual([
        'openai cannot offer the tool `web_search` (tools[0].type); settings.hosted_tools: drop sends the request without it',
      ]);
      expect(backup.requests).toHaveLength(0);
    });

    it('under hosted_tools: drop the target gets the request without it; the attempt and the result say so', async () => {
      const result = (await router.execute(request('dropping', { nativeOnly: [search, { ...search, param: 'tools[2].type' }] }, { reasoning_effort: null }))) as JsonResult;
      expect(trail(result)).toEqual(['backup/m:ok:ok (openai cannot offer the tool `web_search`: sent without it (hosted_tools: drop))']);
      expect(result.droppedTools).toEqual(['web_search']);
      expect(backup.requests).toHaveLength(1);
    });

    it('drop leaves out only droppable ones: a forced tool still skips the target; a stream carries the dropped tools too', async () => {
      const forced = await failure(router.execute(request('dropping', { nativeOnly: [{ ...search, droppable: false }] }, { reasoning_effort: null })));
      expect(forced).toMatchObject({ code: 'unsupported_parameter', param: 'tools[0].type' });
      expect(forced.outcome.attempts[0]!.detail).toBe('openai cannot offer the tool `web_search` (tools[0].type)');
      const streamed = (await router.execute(request('dropping', { nativeOnly: [search], stream: true }, { reasoning_effort: null, stream: true }))) as StreamResult;
      for await (const _ of streamed.events);
      expect(streamed.droppedTools).toEqual(['web_search']);
    });

    it('optional parameters and hosted tools dropped together are both in the note', async () => {
      const result = (await router.execute(request('dropping-claude', { optionalParameters: ['reasoning_effort'], nativeOnly: [search] }))) as JsonResult;
      expect(trail(result)).toEqual([
        'anthropic/claude-sonnet-4-5:ok:ok (anthropic cannot honour `reasoning_effort`: sent without it (optional); anthropic cannot offer the tool `web_search`: sent without it (hosted_tools: drop))',
      ]);
      expect(claude.requests[0]!.body).not.toHaveProperty('reasoning_effort');
    });
  });

  it('token counting counts for the target that would serve the request', () => {
    expect(router.countTokens(request('mana/reasoning')).target).toBe('backup/m');
    expect(router.countTokens(request('mana/reasoning', { optionalParameters: ['reasoning_effort'] })).target).toBe('anthropic/claude-sonnet-4-5');
  });
});
