/**
 * Hosted (server-side) tools, judged per target, with the official SDKs
 * (@anthropic-ai/sdk 1.10.0, openai 6.49.0) through the built gateway:
 * Anthropic's `web_search_20250305` reaches an `anthropic` target as written
 * (with the client's `anthropic-beta`); a chat target that cannot run it is
 * skipped as `unsupported_parameter`, a chain of only such targets answers
 * 400 naming the tool, and an alias set to `hosted_tools: drop` answers
 * without it, saying so in X-Mana-LLM-Dropped-Tools and the attempt's detail.
 * OpenAI's `web_search` / `image_generation` on `/v1/responses` the same way.
 * Every alias but the mixed one starts with a dead target.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const KEY = 'sk-mana-hosted-tools-e2e-5b2e';
const ANTHROPIC_KEY = 'sk-ant-hosted-tools-e2e-8f31';
const BETA = 'web-search-2025-03-05';

let claude: FakeUpstream;
let cloud: FakeUpstream;
let gw: GatewayProcess;
let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(async () => {
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  cloud = await startFakeOpenAI();
  claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'Searched natively.', chunks: 2 });
  cloud.on('m1', { kind: 'answer', content: 'Answered without search.', chunks: 2 });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl, `  anthropic: { base_url: "${claude.url}" }\n`) +
    aliasesYaml(
      {
        'mana/reasoning': ['dead/m0', 'anthropic/claude-sonnet-4-5'],
        'mana/chat': ['dead/m0', 'cloud/m1'],
        'mana/mixed': ['cloud/m1', 'anthropic/claude-sonnet-4-5'],
      },
      ['dead/m0', 'cloud/m1'],
    ) +
    // The operator's choice for a client that always offers hosted tools (Cline).
    `  mana/chat-drop:\n    settings: { hosted_tools: drop }\n    chain: [dead/m0, cloud/m1]\n`;
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0, defaultHeaders: { 'anthropic-beta': BETA } });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([claude?.close(), cloud?.close()]);
});

const SEARCH = { type: 'web_search_20250305', name: 'web_search', max_uses: 3 } as const;
const READ = { name: 'read_file', description: 'Read a file', input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } } };
/** What Cline's anthropic provider sends: its own tools and the hosted web search. */
const params = (model: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model,
  max_tokens: 64,
  messages: [{ role: 'user', content: 'What changed in Node 20?' }],
  tools: [READ, SEARCH],
});

const toolsSent = (upstream: FakeUpstream): unknown => (upstream.requests.at(-1)!.body as Json).tools;

describe('/v1/messages with web_search_20250305', () => {
  it('an alias whose first live target is anthropic: the tool goes upstream as written, with the client betas (stream)', async () => {
    const before = cloud.requests.length;
    const message = await anthropic.messages.stream({ ...params('mana/reasoning'), stream: true } as Anthropic.MessageStreamParams).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Searched natively.' }]);
    const sent = claude.requests.at(-1)!;
    expect((sent.body as Json).tools).toEqual([READ, SEARCH]);
    expect(sent.headers['anthropic-beta']).toBe(BETA);
    expect(cloud.requests.length).toBe(before);
  });

  it('a chat-only alias: 400 naming the tool and its target kind (no other), nothing sent upstream', async () => {
    const before = cloud.requests.length;
    const error = await anthropic.messages.create(params('mana/chat')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    const message = (error as InstanceType<typeof Anthropic.BadRequestError>).message;
    expect(message).toContain('web_search_20250305');
    expect(message).toContain('openai cannot offer the tool');
    expect(message).toContain('hosted_tools: drop');
    expect(message).not.toMatch(/anthropic|ollama|OpenAI-compatible/);
    expect(cloud.requests.length).toBe(before);
  });

  it('a chat-only alias set to hosted_tools: drop answers without it; the header and the attempt say so', async () => {
    const { data, response } = await anthropic.messages.create(params('mana/chat-drop')).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Answered without search.' }]);
    expect(response.headers.get('x-mana-llm-dropped-tools')).toBe('web_search_20250305');
    expect(toolsSent(cloud)).toEqual([{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: READ.input_schema } }]);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === response.headers.get('x-request-id'));
    expect(line.attempts).toMatchObject([
      { target: 'dead/m0', outcome: 'failed' },
      { target: 'cloud/m1', outcome: 'ok', detail: 'openai cannot offer the tool `web_search_20250305`: sent without it (hosted_tools: drop)' },
    ]);
  });

  it('a stream on the drop alias carries the header too', async () => {
    const { data: stream, response } = await anthropic.messages.create({ ...params('mana/chat-drop'), stream: true }).withResponse();
    expect(response.headers.get('x-mana-llm-dropped-tools')).toBe('web_search_20250305');
    let text = '';
    for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    expect(text).toBe('Answered without search.');
  });

  it('a chain [chat target, anthropic target]: the chat target is skipped (unsupported_parameter), the anthropic one answers', async () => {
    const before = cloud.requests.length;
    const { data, response } = await anthropic.messages.create(params('mana/mixed')).withResponse();
    expect(data.content).toEqual([{ type: 'text', text: 'Searched natively.' }]);
    expect(response.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-sonnet-4-5');
    expect(response.headers.get('x-mana-llm-dropped-tools')).toBeNull();
    expect(toolsSent(claude)).toEqual([READ, SEARCH]);
    expect(cloud.requests.length).toBe(before);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === response.headers.get('x-request-id'));
    expect(line.attempts).toMatchObject([
      { target: 'cloud/m1', outcome: 'skipped', reason: 'unsupported_parameter', detail: expect.stringContaining('`web_search_20250305` (tools[1].type)') },
      { target: 'anthropic/claude-sonnet-4-5', outcome: 'ok' },
    ]);
  });

  describe('the next turn, with the search the model made in the conversation', () => {
    const searched: Anthropic.MessageParam = {
      role: 'assistant',
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'node 20 changes' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [{ type: 'web_search_result', url: 'https://nodejs.org/en/blog', title: 'Node 20', encrypted_content: 'abc', page_age: null }] },
        { type: 'text', text: 'Node 20 added a permission model.' },
      ],
    };
    const next = (model: string): Anthropic.MessageCreateParamsNonStreaming => ({
      ...params(model),
      messages: [...params(model).messages, searched, { role: 'user', content: 'And Node 22?' }],
    });

    it('an anthropic target gets it as written', async () => {
      const message = await anthropic.messages.create(next('mana/reasoning'));
      expect(message.content).toEqual([{ type: 'text', text: 'Searched natively.' }]);
      expect((claude.requests.at(-1)!.body as Json).messages).toEqual(next('mana/reasoning').messages);
    });

    it('the drop alias gets the conversation without the search blocks; the header names them after the tool', async () => {
      const { data, response } = await anthropic.messages.create(next('mana/chat-drop')).withResponse();
      expect(data.content).toEqual([{ type: 'text', text: 'Answered without search.' }]);
      expect(response.headers.get('x-mana-llm-dropped-tools')).toBe('web_search_20250305, server_tool_use, web_search_tool_result');
      expect((cloud.requests.at(-1)!.body as Json).messages).toEqual([
        { role: 'user', content: 'What changed in Node 20?' },
        { role: 'assistant', content: 'Node 20 added a permission model.' },
        { role: 'user', content: 'And Node 22?' },
      ]);
    });

    it('a chat-only alias without the setting: 400 naming the tool first', async () => {
      const error = await anthropic.messages.create(next('mana/chat')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as InstanceType<typeof Anthropic.BadRequestError>).message).toContain('`web_search_20250305` (tools[1].type)');
    });
  });

  it('count_tokens counts such a request on either alias (nothing goes upstream)', async () => {
    const before = claude.requests.length + cloud.requests.length;
    for (const model of ['mana/chat', 'mana/reasoning']) {
      const { messages, tools } = params(model);
      expect((await anthropic.messages.countTokens({ model, messages, tools })).input_tokens).toBeGreaterThan(0);
    }
    expect(claude.requests.length + cloud.requests.length).toBe(before);
  });
});

describe('/v1/responses with web_search and image_generation', () => {
  const request = (model: string): OpenAI.Responses.ResponseCreateParamsNonStreaming => ({
    model,
    input: 'What changed in Node 20?',
    tools: [{ type: 'function', name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } }, strict: false }, { type: 'web_search' }, { type: 'image_generation' }],
  });

  it('a chat-only alias: 400 unsupported_parameter naming the tool, nothing sent upstream', async () => {
    const before = cloud.requests.length;
    const error = await openai.responses.create(request('mana/chat')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.code).toBe('unsupported_parameter');
    expect(bad.param).toBe('tools[1].type');
    expect(bad.message).toContain('`web_search`');
    expect(cloud.requests.length).toBe(before);
  });

  it('the drop alias answers without them: the upstream sees only the function tool; the header names both', async () => {
    const { data, response } = await openai.responses.create(request('mana/chat-drop')).withResponse();
    expect(data.output_text).toBe('Answered without search.');
    expect(response.headers.get('x-mana-llm-dropped-tools')).toBe('web_search, image_generation');
    expect((toolsSent(cloud) as Json[]).map((t) => t.function.name)).toEqual(['read_file']);
    // The answer repeats the request's tools as the client sent them.
    expect(data.tools.map((t) => t.type)).toEqual(['function', 'web_search', 'image_generation']);
  });

  it('a stream on the drop alias completes, with the header', async () => {
    const { data: stream, response } = await openai.responses.create({ ...request('mana/chat-drop'), stream: true }).withResponse();
    expect(response.headers.get('x-mana-llm-dropped-tools')).toBe('web_search, image_generation');
    let text = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    expect(text).toBe('Answered without search.');
  });
});
