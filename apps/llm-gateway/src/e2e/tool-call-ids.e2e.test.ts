/**
 * Tool-call ids a hostile upstream writes, through the built gateway with the
 * official clients (openai 6.49.0 for chat completions and Responses,
 * @anthropic-ai/sdk 1.10.0 for Messages): an OpenAI-compatible fake and a fake
 * Anthropic each answer four calls, two sharing the id `dup`, one with markup
 * and a control character in its id, one with a 85-character id. Whatever the
 * API, streamed or not, the client gets four distinct ids of Anthropic's
 * pattern (within OpenAI's 40 characters), the same ones for the same answer,
 * and sending them back on the next turn to an anthropic target (whose fake
 * refuses a bad or repeated tool id as Anthropic does) works.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeUpstream, type ToolCall } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const ANTHROPIC_KEY = 'sk-ant-tool-ids-e2e-7f2a';
const SAFE_ID = /^[a-zA-Z0-9_-]{1,40}$/;
const CITIES = ['Oslo', 'Rome', 'Paris', 'Lima'];
const UPSTREAM_IDS = ['dup', 'dup', 'call<b onload="x">\u0007\n', `call_${'x'.repeat(80)}`];
const CALLS: ToolCall[] = CITIES.map((city, i) => ({ id: UPSTREAM_IDS[i], function: { name: 'weather', arguments: { city } } }));
const SOURCES = [
  { upstream: 'an OpenAI-compatible upstream', alias: 'mana/openai-calls' },
  { upstream: 'an anthropic upstream', alias: 'mana/claude-calls' },
] as const;

let cloud: FakeUpstream;
let claude: FakeUpstream;
let gw: GatewayProcess;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  cloud.on('calls', { kind: 'answer', toolCalls: CALLS });
  claude.on('calls', { kind: 'answer', toolCalls: CALLS });
  claude.on('next', { kind: 'answer', content: 'Sunny everywhere.', chunks: 2 });
  const config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "sk-cloud-upstream" }\n` +
    `  anthropic: { base_url: "${claude.url}" }\n` +
    aliasesYaml({ 'mana/openai-calls': ['cloud/calls'], 'mana/claude-calls': ['anthropic/calls'], 'mana/next': ['anthropic/next'] }, ['cloud/calls']);
  gw = await spawnGateway({ config, env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'not-needed-auth-off', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'not-needed-auth-off', maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
  await claude?.close();
});

/** Four distinct ids of the safe form; a safe id the upstream used once is kept. */
function expectSafeAndUnique(ids: readonly string[]): void {
  expect(ids).toHaveLength(4);
  expect(new Set(ids).size).toBe(4);
  for (const id of ids) expect(id).toMatch(SAFE_ID);
  expect(ids[0]).toBe('dup');
}

/** What the next turn's anthropic target got: the tool_use ids of the assistant turn and the tool_result ids after it. */
function sentBack(): { uses: string[]; results: string[] } {
  const messages = (claude.requests.at(-1)!.body as Json).messages as Json[];
  const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Json[]) : []));
  return {
    uses: blocks.filter((b) => b.type === 'tool_use').map((b) => b.id as string),
    results: blocks.filter((b) => b.type === 'tool_result').map((b) => b.tool_use_id as string),
  };
}

const CHAT_TOOL = {
  type: 'function' as const,
  function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

describe.each(SOURCES)('chat completions from $upstream (openai 6.49.0)', ({ alias }) => {
  const question = { role: 'user' as const, content: 'Weather in four cities?' };

  it('create and stream: unique safe ids, the same in both; sent back, the next turn is answered', async () => {
    const answer = await openai.chat.completions.create({ model: alias, messages: [question], tools: [CHAT_TOOL] });
    const calls = answer.choices[0]!.message.tool_calls ?? [];
    const ids = calls.map((c) => c.id);
    expectSafeAndUnique(ids);
    const streamed = await openai.chat.completions.stream({ model: alias, messages: [question], tools: [CHAT_TOOL] }).finalChatCompletion();
    expect((streamed.choices[0]!.message.tool_calls ?? []).map((c) => c.id)).toEqual(ids);

    const next = await openai.chat.completions.create({
      model: 'mana/next',
      tools: [CHAT_TOOL],
      messages: [question, answer.choices[0]!.message, ...ids.map((id) => ({ role: 'tool' as const, tool_call_id: id, content: 'sunny' }))],
    });
    expect(next.choices[0]!.message.content).toBe('Sunny everywhere.');
    expect(sentBack()).toEqual({ uses: ids, results: ids });
  });
});

const MESSAGES_TOOL = { name: 'weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

describe.each(SOURCES)('Messages from $upstream (@anthropic-ai/sdk 1.10.0)', ({ alias }) => {
  const question = { role: 'user' as const, content: 'Weather in four cities?' };
  const toolUseIds = (content: readonly Anthropic.ContentBlock[]): string[] => content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));

  it('create and stream().finalMessage(): unique safe ids, the same in both; sent back, the next turn is answered', async () => {
    const message = await anthropic.messages.create({ model: alias, max_tokens: 200, messages: [question], tools: [MESSAGES_TOOL] });
    const ids = toolUseIds(message.content);
    expectSafeAndUnique(ids);
    const streamed = await anthropic.messages.stream({ model: alias, max_tokens: 200, messages: [question], tools: [MESSAGES_TOOL] }).finalMessage();
    expect(toolUseIds(streamed.content)).toEqual(ids);
    expect(streamed.content.flatMap((b) => (b.type === 'tool_use' ? [b.input] : []))).toEqual(CITIES.map((city) => ({ city })));

    const next = await anthropic.messages
      .stream({
        model: 'mana/next',
        max_tokens: 200,
        tools: [MESSAGES_TOOL],
        messages: [
          question,
          { role: 'assistant', content: streamed.content },
          { role: 'user', content: ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'sunny' })) },
        ],
      })
      .finalMessage();
    expect(next.content).toEqual([{ type: 'text', text: 'Sunny everywhere.' }]);
    expect(sentBack()).toEqual({ uses: ids, results: ids });
  });
});

const RESPONSES_TOOL = {
  type: 'function' as const,
  name: 'weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

describe.each(SOURCES)('Responses from $upstream (openai 6.49.0)', ({ alias }) => {
  const question = { role: 'user' as const, content: 'Weather in four cities?' };
  const callIds = (output: readonly OpenAI.Responses.ResponseOutputItem[]): string[] => output.flatMap((o) => (o.type === 'function_call' ? [o.call_id] : []));

  it('create and stream().finalResponse(): unique safe call_ids, the same in both; sent back, the next turn is answered', async () => {
    const response = await openai.responses.create({ model: alias, input: [question], tools: [RESPONSES_TOOL] });
    const ids = callIds(response.output);
    expectSafeAndUnique(ids);
    const streamed = await openai.responses.stream({ model: alias, input: [question], tools: [RESPONSES_TOOL] }).finalResponse();
    expect(callIds(streamed.output)).toEqual(ids);

    // A repeated call_id in input would be refused (400): each comes back once, with its output.
    const next = await openai.responses.create({
      model: 'mana/next',
      tools: [RESPONSES_TOOL],
      input: [
        question,
        ...(streamed.output as OpenAI.Responses.ResponseInputItem[]),
        ...ids.map((id) => ({ type: 'function_call_output' as const, call_id: id, output: 'sunny' })),
      ],
    });
    expect(next.output_text).toBe('Sunny everywhere.');
    expect(sentBack()).toEqual({ uses: ids, results: ids });
  });
});
