/**
 * OpenAI's Responses API clients against the built gateway's `/v1/responses`:
 * the official SDK (openai 6.49.0: create, stream, parse) and the Vercel AI
 * SDK's responses model (@ai-sdk/openai 3.0.141 with ai 6.0.326), base URL at
 * the gateway. Every alias's first target is dead (a refused port); an
 * OpenAI-compatible fake or an Ollama fake (native /api/chat) answers. What the
 * SDKs hand their caller is asserted — text, events, function calls, parsed
 * output, usage, error classes — and that the ids of a function-calling round
 * trip match from the upstream's answer to the upstream's next request.
 */
import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOllama, startFakeOpenAI, type FakeBehavior, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { eventSequence, expectConsistentStream, FUNCTION_CALL_EVENTS, lastSent } from './responses-events.js';

const KEY = 'sk-mana-responses-sdk-e2e-5c7f';
const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

let cloud: FakeUpstream;
let local: FakeUpstream;
let gw: GatewayProcess;
let client: OpenAI;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  local = await startFakeOllama({ models: ['gemma3:4b'] });
  cloud.on('m1', { kind: 'answer', content: 'Hello from the gateway', chunks: 3, usage: { prompt_tokens: 17, completion_tokens: 5 } });
  cloud.on('city', { kind: 'answer', content: '{"city":"Paris","temperature_c":22}', chunks: 2 });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl, `  local: { type: ollama, base_url: "${local.url}" }\n`) +
    aliasesYaml(
      { 'mana/structured': ['dead/m0', 'cloud/city'], 'mana/tools': ['dead/m0', 'cloud/tools'], 'mana/local': ['dead/m0', 'local/gemma3:4b'] },
      ['dead/m0', 'cloud/m1'],
    );
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY } });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([cloud?.close(), local?.close()]);
});

/**
 * Output items sent back as input, as OpenAI's function-calling guide does
 * (the SDK's types list output item kinds that are no input kinds; these are not among them).
 */
const asInput = (output: readonly OpenAI.Responses.ResponseOutputItem[]): OpenAI.Responses.ResponseInputItem[] => output as OpenAI.Responses.ResponseInputItem[];

describe('openai 6.49.0', () => {
  it('responses.create with a string input: output_text after failover, the alias as model, usage; the second target resolved', async () => {
    const { data, response } = await client.responses.create({ model: 'mana/fast-text', instructions: 'Be brief.', input: 'Say hi' }).withResponse();
    expect(data.output_text).toBe('Hello from the gateway');
    expect(data).toMatchObject({ object: 'response', model: 'mana/fast-text', status: 'completed', usage: { input_tokens: 17, output_tokens: 5, total_tokens: 22 } });
    expect(data.id).toMatch(/^resp_/);
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(response.headers.get('x-mana-llm-attempts')).toBe('2');
  });

  it('responses.create with an item list: earlier turns as items, the answer to the last', async () => {
    const data = await client.responses.create({
      model: 'mana/fast-text',
      input: [
        { role: 'developer', content: 'Answer in one word.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Capital of France?' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Paris.', annotations: [] }], id: 'msg_earlier', status: 'completed' },
        { role: 'user', content: 'And say hi.' },
      ],
    });
    expect(data.output_text).toBe('Hello from the gateway');
    expect(lastSent(cloud).messages.map((m: Json) => m.role)).toEqual([expect.stringMatching(/^(system|developer)$/), 'user', 'assistant', 'user']);
  });

  it('responses.stream: the events in order, numbered from 0, their ids those of finalResponse()', async () => {
    const stream = client.responses.stream({ model: 'mana/fast-text', input: 'Say hi' });
    const pieces: string[] = [];
    stream.on('response.output_text.delta', (event) => pieces.push(event.delta));
    const events: Json[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    expect(pieces.join('')).toBe('Hello from the gateway');
    expect(pieces.length).toBe(3);
    const completed = expectConsistentStream(events);
    expect(final.output_text).toBe('Hello from the gateway');
    expect(final.id).toBe(completed.id);
    expect(final.output.map((o) => o.id)).toEqual(completed.output.map((o: Json) => o.id));
    expect(final.usage).toMatchObject({ input_tokens: 17, output_tokens: 5 });
  });

  it('create({ stream: true }): the SDK reads the same stream, ending with response.completed', async () => {
    const stream = await client.responses.create({ model: 'mana/fast-text', input: 'Say hi', stream: true });
    const events: Json[] = [];
    for await (const event of stream) events.push(event);
    expect(eventSequence(events).at(-1)).toBe('response.completed');
    const final = expectConsistentStream(events);
    expect(final.output[0].content[0].text).toBe('Hello from the gateway');
  });

  it('responses.parse with a zod schema (zodTextFormat): output_parsed, and the schema reached the upstream as response_format', async () => {
    const City = z.object({ city: z.string(), temperature_c: z.number() });
    const parsed = await client.responses.parse({ model: 'mana/structured', input: 'Weather in Paris as JSON', text: { format: zodTextFormat(City, 'city_weather') } });
    expect(parsed.output_parsed).toEqual({ city: 'Paris', temperature_c: 22 });
    const format = lastSent(cloud).response_format;
    expect(format).toMatchObject({ type: 'json_schema', json_schema: { name: 'city_weather', strict: true, schema: { type: 'object', required: ['city', 'temperature_c'] } } });
  });

  it("errors are the SDK's classes: AuthenticationError for a wrong key, BadRequestError with the code for previous_response_id", async () => {
    const wrong = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'wrong', maxRetries: 0 });
    const auth = await wrong.responses.create({ model: 'mana/fast-text', input: 'hi' }).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((auth as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    const stateful = await client.responses.create({ model: 'mana/fast-text', input: 'hi', previous_response_id: 'resp_earlier' }).catch((e: unknown) => e);
    expect(stateful).toBeInstanceOf(OpenAI.BadRequestError);
    expect(stateful).toMatchObject({ status: 400, code: 'previous_response_not_supported', param: 'previous_response_id' });
  });
});

/** Per upstream dialect: the fake, the alias whose second target it is, the model it answers as, and how a call and its result reach it. */
const DIALECTS = [
  {
    dialect: 'an OpenAI-compatible target',
    alias: 'mana/tools',
    fake: () => cloud,
    model: 'tools',
    call: { id: 'call_1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
    checkCallId: (id: string) => expect(id).toBe('call_1'),
    exchange: (callId: string) => [
      { role: 'assistant', content: expect.toSatisfy((c: unknown) => c === null || c === ''), tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: callId, content: '22 °C, sunny' },
    ],
  },
  {
    dialect: 'an Ollama target (native /api/chat)',
    alias: 'mana/local',
    fake: () => local,
    model: 'gemma3:4b',
    call: { function: { name: 'get_weather', arguments: { city: 'Paris' } } },
    // Ollama's calls carry no id: the gateway makes one; the result goes back by the function's name.
    checkCallId: (id: string) => expect(id).toMatch(/^call_/),
    exchange: () => [
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { role: 'tool', content: '22 °C, sunny', tool_name: 'get_weather' },
    ],
  },
] as const;

describe.each(DIALECTS)('a function-calling round trip through $dialect (openai 6.49.0)', ({ alias, fake, model, call, checkCallId, exchange }) => {
  /** The target asks for the call first, then (once it has the result) answers. */
  const turns = (): void =>
    fake().on(model, [
      { kind: 'answer', toolCalls: [call] },
      { kind: 'answer', content: 'It is sunny in Paris.', chunks: 2 },
    ] satisfies FakeBehavior[]);
  const question = { role: 'user' as const, content: 'Weather in Paris?' };

  it('not streamed: function_call → function_call_output with its call_id → the answer', async () => {
    turns();
    const first = await client.responses.create({ model: alias, input: [question], tools: [WEATHER] });
    const fc = first.output.find((o) => o.type === 'function_call');
    expect(fc).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' });
    if (fc?.type !== 'function_call') throw new Error('no function call');
    checkCallId(fc.call_id);
    const second = await client.responses.create({
      model: alias,
      tools: [WEATHER],
      input: [question, ...asInput(first.output), { type: 'function_call_output', call_id: fc.call_id, output: '22 °C, sunny' }],
    });
    expect(second.output_text).toBe('It is sunny in Paris.');
    expect(lastSent(fake()).messages.slice(-2)).toEqual(exchange(fc.call_id));
  });

  it('streamed: the call_id of the events is the final one, and it goes back to the upstream', async () => {
    turns();
    const stream = client.responses.stream({ model: alias, input: [question], tools: [WEATHER] });
    const events: Json[] = [];
    for await (const event of stream) events.push(event);
    const first = await stream.finalResponse();
    expect(eventSequence(events)).toEqual(FUNCTION_CALL_EVENTS);
    expectConsistentStream(events);
    const fc = first.output[0];
    if (fc?.type !== 'function_call') throw new Error('no function call');
    expect(events[2].item.call_id).toBe(fc.call_id);
    checkCallId(fc.call_id);
    const answer = await client.responses
      .stream({ model: alias, tools: [WEATHER], input: [question, ...asInput(first.output), { type: 'function_call_output', call_id: fc.call_id, output: '22 °C, sunny' }] })
      .finalResponse();
    expect(answer.output_text).toBe('It is sunny in Paris.');
    expect(lastSent(fake()).messages.slice(-2)).toEqual(exchange(fc.call_id));
  });
});

describe('@ai-sdk/openai 3.0.141 responses model (ai 6.0.326)', () => {
  const mana = () => createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: KEY });

  it('generateText: the text, the finish reason, the usage and the resolved target', async () => {
    const { text, finishReason, usage, response } = await generateText({ model: mana().responses('mana/fast-text'), prompt: 'Say hi', maxOutputTokens: 100 });
    expect(text).toBe('Hello from the gateway');
    expect(finishReason).toBe('stop');
    expect(usage).toMatchObject({ inputTokens: 17, outputTokens: 5 });
    expect(response.headers?.['x-mana-llm-resolved']).toBe('cloud/m1');
    expect(lastSent(cloud).max_tokens ?? lastSent(cloud).max_completion_tokens).toBe(100);
  });

  it('streamText: the text streamed in its pieces', async () => {
    const result = streamText({ model: mana().responses('mana/fast-text'), prompt: 'Say hi' });
    const pieces: string[] = [];
    for await (const piece of result.textStream) pieces.push(piece);
    expect(pieces.length).toBe(3);
    expect(pieces.join('')).toBe('Hello from the gateway');
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({ inputTokens: 17, outputTokens: 5 });
  });

  /** A weather tool for the AI SDK, recording its calls. */
  const weatherTool = (calls: unknown[]) =>
    tool({
      description: 'The weather in a city',
      inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
      execute: async (input) => {
        calls.push(input);
        return '22 °C, sunny';
      },
    });

  it('text before a tool call: with store: false (as the docs say) the next step sends the text back whole; by default it refers to it by id, which is refused', async () => {
    const turns = (): void =>
      cloud.on('tools', [
        { kind: 'answer', content: 'Let me check.', toolCalls: [{ id: 'call_text', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { kind: 'answer', content: 'Sunny in Oslo.' },
      ]);
    turns();
    const calls: unknown[] = [];
    const { text } = await generateText({
      model: mana().responses('mana/tools'),
      prompt: 'Weather in Oslo?',
      stopWhen: stepCountIs(3),
      tools: { get_weather: weatherTool(calls) },
      providerOptions: { openai: { store: false } },
    });
    expect(text).toBe('Sunny in Oslo.');
    expect(lastSent(cloud).messages.slice(-2)).toMatchObject([
      { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_text' }] },
      { role: 'tool', tool_call_id: 'call_text' },
    ]);

    turns();
    const refused = await generateText({ model: mana().responses('mana/tools'), prompt: 'Weather in Oslo?', stopWhen: stepCountIs(3), tools: { get_weather: weatherTool([]) } }).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ statusCode: 400, responseBody: expect.stringContaining('response_storage_not_supported') });
  });

  it('a tool: called with the parsed input, its result sent back with the call id, the final text', async () => {
    cloud.on('tools', [
      { kind: 'answer', toolCalls: [{ id: 'call_ai', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { kind: 'answer', content: 'It is sunny in Paris.', chunks: 2 },
    ]);
    const calls: unknown[] = [];
    const { text, steps } = await generateText({
      model: mana().responses('mana/tools'),
      prompt: 'Weather in Paris?',
      stopWhen: stepCountIs(3),
      tools: { get_weather: weatherTool(calls) },
    });
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(steps.length).toBe(2);
    expect(steps[0]!.toolCalls).toMatchObject([{ toolCallId: 'call_ai', toolName: 'get_weather' }]);
    expect(text).toBe('It is sunny in Paris.');
    expect(lastSent(cloud).messages.slice(-2)).toMatchObject([
      { role: 'assistant', tool_calls: [{ id: 'call_ai', function: { name: 'get_weather' } }] },
      { role: 'tool', tool_call_id: 'call_ai', content: expect.stringContaining('22 °C, sunny') },
    ]);
  });
});
