/**
 * Anthropic's clients against the built gateway's `/v1/messages`: the
 * official SDK (@anthropic-ai/sdk 1.10.0) and the Vercel AI SDK's anthropic
 * provider (@ai-sdk/anthropic 3.0.140 with ai 6.0.326), base URL at the
 * gateway. Every alias's first target is dead (a refused port); an
 * OpenAI-compatible fake answers. What the SDKs hand their caller is what is
 * asserted: text, tool calls, stop reasons, usage, error classes.
 */
import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const KEY = 'sk-mana-messages-sdk-e2e-c41d';
/** A 1×1 PNG. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

let cloud: FakeUpstream;
let gw: GatewayProcess;
let client: Anthropic;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('m1', { kind: 'answer', content: 'Hello from the gateway', chunks: 3, usage: { prompt_tokens: 17, completion_tokens: 5 } });
  cloud.on('vision', { kind: 'answer', content: 'A single pixel.' });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl) +
    aliasesYaml({ 'mana/vision': ['dead/m0', 'cloud/vision'], 'mana/tools': ['dead/m0', 'cloud/tools'] }, ['dead/m0', 'cloud/m1']);
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY } });
  client = new Anthropic({ baseURL: gw.url, apiKey: KEY, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

/** The tools alias answers a tool call first, then (once it got the result) text. */
function toolTurns(): void {
  cloud.on('tools', [
    { kind: 'answer', toolCalls: [{ id: 'call_1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }], chunks: 1 },
    { kind: 'answer', content: 'It is sunny in Paris.', chunks: 2 },
  ]);
}

/** The last request the tools target got: the tool result must be there as OpenAI's tool message. */
function lastToolExchange(): Json[] {
  return (cloud.requests.at(-1)!.body as Json).messages.slice(-2);
}

describe('@anthropic-ai/sdk 1.10.0', () => {
  it('messages.create: the answer, after failover, with the alias as model and the upstream usage', async () => {
    const { data, response } = await client.messages
      .create({ model: 'mana/fast-text', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hi' }] })
      .withResponse();
    expect(data).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'mana/fast-text',
      content: [{ type: 'text', text: 'Hello from the gateway' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 17, output_tokens: 5 },
    });
    expect(data.id).toMatch(/^msg_/);
    expect(response.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
  });

  it('messages.stream with finalMessage(): the streamed text in order and the final usage', async () => {
    const stream = client.messages.stream({ model: 'mana/fast-text', max_tokens: 100, messages: [{ role: 'user', content: 'Say hi' }] });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const message = await stream.finalMessage();
    expect(pieces.length).toBe(3);
    expect(pieces.join('')).toBe('Hello from the gateway');
    expect(message).toMatchObject({ model: 'mana/fast-text', content: [{ type: 'text', text: 'Hello from the gateway' }], stop_reason: 'end_turn', usage: { input_tokens: 17, output_tokens: 5 } });
  });

  it('a tool-use round trip, not streamed: tool_use → tool_result → the answer', async () => {
    toolTurns();
    const question = { role: 'user' as const, content: 'Weather in Paris?' };
    const first = await client.messages.create({ model: 'mana/tools', max_tokens: 100, tools: [WEATHER_TOOL], messages: [question] });
    expect(first.stop_reason).toBe('tool_use');
    const call = first.content.find((b) => b.type === 'tool_use');
    expect(call).toMatchObject({ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } });
    const second = await client.messages.create({
      model: 'mana/tools',
      max_tokens: 100,
      tools: [WEATHER_TOOL],
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.id, content: '22 °C, sunny' }] }],
    });
    expect(second).toMatchObject({ content: [{ type: 'text', text: 'It is sunny in Paris.' }], stop_reason: 'end_turn' });
    expect(lastToolExchange()).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '22 °C, sunny' },
    ]);
  });

  it('a tool-use round trip, streamed: the SDK assembles the tool input from input_json_delta', async () => {
    toolTurns();
    const question = { role: 'user' as const, content: 'Weather in Paris?' };
    const first = await client.messages.stream({ model: 'mana/tools', max_tokens: 100, tools: [WEATHER_TOOL], messages: [question] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]);
    const second = await client.messages
      .stream({
        model: 'mana/tools',
        max_tokens: 100,
        tools: [WEATHER_TOOL],
        messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: '22 °C' }], is_error: false }] }],
      })
      .finalMessage();
    expect(second).toMatchObject({ content: [{ type: 'text', text: 'It is sunny in Paris.' }], stop_reason: 'end_turn' });
    expect(lastToolExchange()[1]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '22 °C' });
  });

  it('an image (base64) reaches the upstream as a data URL', async () => {
    const message = await client.messages.create({
      model: 'mana/vision',
      max_tokens: 50,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL } }, { type: 'text', text: 'What is this?' }] }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'A single pixel.' }]);
    expect((cloud.requests.at(-1)!.body as Json).messages).toEqual([
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PIXEL}` } }, { type: 'text', text: 'What is this?' }] },
    ]);
  });

  it('countTokens: the estimate, never 0', async () => {
    const count = await client.messages.countTokens({ model: 'mana/fast-text', system: 'Be brief.', messages: [{ role: 'user', content: 'Say hi' }], tools: [WEATHER_TOOL] });
    expect(count.input_tokens).toBeGreaterThan(10);
  });

  it('an auth error is the SDK\'s AuthenticationError; an Authorization: Bearer token (authToken, as Claude Code sends it) passes', async () => {
    const wrong = new Anthropic({ baseURL: gw.url, apiKey: 'wrong', maxRetries: 0 });
    const error = await wrong.messages.create({ model: 'mana/fast-text', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((error as InstanceType<typeof Anthropic.AuthenticationError>).status).toBe(401);
    expect((error as InstanceType<typeof Anthropic.AuthenticationError>).requestID).toMatch(/^[0-9a-f-]{36}$/);
    const bearer = new Anthropic({ baseURL: gw.url, authToken: KEY, maxRetries: 0 });
    const ok = await bearer.messages.create({ model: 'mana/fast-text', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(ok.content).toEqual([{ type: 'text', text: 'Hello from the gateway' }]);
  });

  it('a missing max_tokens is the SDK\'s BadRequestError naming it', async () => {
    const error = await client.messages.create({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((error as Error).message)).toContain('max_tokens');
  });
});

describe('@ai-sdk/anthropic 3.0.140 (ai 6.0.326)', () => {
  const mana = () => createAnthropic({ baseURL: `${gw.url}/v1`, apiKey: KEY });

  it('generateText: the text and the usage', async () => {
    const { text, finishReason, usage } = await generateText({ model: mana()('mana/fast-text'), prompt: 'Say hi', maxOutputTokens: 100 });
    expect(text).toBe('Hello from the gateway');
    expect(finishReason).toBe('stop');
    expect(usage).toMatchObject({ inputTokens: 17, outputTokens: 5 });
  });

  it('streamText: the text streamed in its pieces', async () => {
    const result = streamText({ model: mana()('mana/fast-text'), prompt: 'Say hi', maxOutputTokens: 100 });
    const pieces: string[] = [];
    for await (const piece of result.textStream) pieces.push(piece);
    expect(pieces.join('')).toBe('Hello from the gateway');
    expect(await result.finishReason).toBe('stop');
  });

  it('a tool: called with the parsed input, its result sent back, the final text', async () => {
    toolTurns();
    const calls: unknown[] = [];
    const { text, steps } = await generateText({
      model: mana()('mana/tools'),
      prompt: 'Weather in Paris?',
      maxOutputTokens: 100,
      stopWhen: stepCountIs(3),
      tools: {
        get_weather: tool({
          description: 'The weather in a city',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
          execute: async (input) => {
            calls.push(input);
            return '22 °C, sunny';
          },
        }),
      },
    });
    expect(calls).toEqual([{ city: 'Paris' }]);
    expect(steps.length).toBe(2);
    expect(text).toBe('It is sunny in Paris.');
    expect(lastToolExchange()[1]).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: expect.stringContaining('22 °C, sunny') });
  });
});
