/**
 * What the built gateway writes, checked against OpenAI's published OpenAPI
 * spec (a pinned copy: see openai-spec.ts): chat completions translated from
 * Ollama or passed through from an OpenAI-compatible upstream, their stream
 * chunks, embeddings (float), /v1/models and the gateway's own errors. Clients
 * generated from the spec (Java, Go, Rust) refuse answers that miss a required
 * member, so every shape a client can receive is validated here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFakes, startFakes, type Fakes, type ToolCall } from '@mana/llm-testkit';
import { spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { specViolations } from './openai-spec.js';

const KEY = 'sk-client-spec-e2e';
const TOOLS = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const CALLS: ToolCall[] = [
  { id: 'call_1', function: { name: 'get_weather', arguments: { city: 'Paris' } } },
  { id: 'call_2', function: { name: 'get_weather', arguments: { city: 'Oslo' } } },
];

let fakes: Fakes<'cloud' | 'node'>;
let gw: GatewayProcess;

beforeAll(async () => {
  fakes = await startFakes({ cloud: 'openai', node: 'ollama' });
  for (const fake of Object.values(fakes)) {
    fake.on('text', { kind: 'answer', content: 'Hello there', chunks: 2 });
    fake.on('tools', { kind: 'answer', toolCalls: CALLS });
    fake.on('broken', { kind: 'answer', content: 'one two', chunks: 2, errorEventAfterChunks: 1 });
    fake.on('emb', { kind: 'answer', embedding: { dimensions: 4 } });
    fake.on('refused', { kind: 'status', status: 400 });
    fake.on('down', { kind: 'status', status: 500 });
  }
  fakes.cloud.on('refusal', { kind: 'answer', refusal: 'I cannot help with that.' });
  fakes.cloud.on('html', { kind: 'status', status: 400, body: '<html><body>Bad Request</body></html>' });
  const embedding = (name: string, target: string) => `  ${name}:\n    kind: embedding\n    embedding_space: s\n    chain: [${target}]\n`;
  const config =
    `settings:\n  probe_interval: 60s\n  failure_threshold: 1000\n` +
    `providers:\n` +
    `  cloud: { type: openai, base_url: "${fakes.cloud.baseUrl}", api_key: "sk-upstream" }\n` +
    `  node: { type: ollama, base_url: "${fakes.node.url}" }\n` +
    `aliases:\n` +
    ['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision'].map((a) => `  ${a}: [cloud/text]\n`).join('') +
    embedding('mana/embed', 'cloud/emb') +
    embedding('mana/embed-local', 'node/emb');
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await closeFakes(fakes);
});

async function call(path: string, init: { body?: unknown; method?: string; auth?: boolean; raw?: string } = {}): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.auth !== false) headers.authorization = `Bearer ${KEY}`;
  const body = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  const res = await fetch(`${gw.url}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
  return { status: res.status, text: await res.text() };
}

const chat = (model: string, extra: Record<string, unknown> = {}) =>
  call('/v1/chat/completions', { body: { model, messages: [{ role: 'user', content: 'hi' }], ...extra } });

/** The JSON of each `data:` event of an SSE body, without `[DONE]`. */
function events(text: string): Json[] {
  return text
    .split('\n\n')
    .map((e) => e.replace(/^data: /, '').trim())
    .filter((d) => d !== '' && d !== '[DONE]')
    .map((d) => JSON.parse(d));
}

function expectConforms(schema: string, value: unknown, what: string): void {
  expect(specViolations(schema, value), `${what}: ${JSON.stringify(value)}`).toEqual([]);
}

describe.each([
  ['Ollama native', 'node'],
  ['OpenAI-compatible pass-through', 'cloud'],
])('answers translated from %s conform to the OpenAI spec', (_dialect, provider) => {
  it('a chat completion', async () => {
    const text = await chat(`${provider}/text`);
    expect(text.status).toBe(200);
    expectConforms('CreateChatCompletionResponse', JSON.parse(text.text), 'text answer');
  });

  it('a chat completion that calls tools: content null, no index on a call outside a stream', async () => {
    const tools = await chat(`${provider}/tools`, { tools: TOOLS });
    expect(tools.status).toBe(200);
    const body = JSON.parse(tools.text);
    expectConforms('CreateChatCompletionResponse', body, 'tool-call answer');
    // What OpenAI sends (the spec allows more, generated clients expect this): no text is null, and `index` belongs to stream deltas.
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ]);
    expect(body.choices[0].finish_reason).toBe('tool_calls');
  });

  it('stream chunks: text and tool calls, with and without the usage chunk', async () => {
    for (const [model, extra] of [
      ['text', {}],
      ['text', { stream_options: { include_usage: true } }],
      ['tools', { tools: TOOLS }],
    ] as const) {
      const res = await chat(`${provider}/${model}`, { stream: true, ...extra });
      expect(res.status).toBe(200);
      const chunks = events(res.text);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks) expectConforms('CreateChatCompletionStreamResponse', chunk, `${model} chunk`);
      if (model === 'tools') {
        const calls = chunks.flatMap((c) => c.choices.flatMap((choice: Json) => choice.delta.tool_calls ?? []));
        expect(calls.map((c: Json) => c.index)).toEqual([0, 1]);
      }
      if ('stream_options' in extra) expect(chunks.some((c) => c.usage?.prompt_tokens > 0)).toBe(true);
    }
  });

  it('embeddings (float)', async () => {
    const res = await call('/v1/embeddings', { body: { model: provider === 'node' ? 'mana/embed-local' : 'mana/embed', input: ['a', 'b'], encoding_format: 'float' } });
    expect(res.status).toBe(200);
    expectConforms('CreateEmbeddingResponse', JSON.parse(res.text), 'embeddings');
  });

  it('an upstream refusing the request (400) and an upstream error mid-stream reach the client as spec errors', async () => {
    const refused = await chat(`${provider}/refused`);
    expect(refused.status).toBe(400);
    const error = JSON.parse(refused.text);
    expectConforms('ErrorResponse', error, 'relayed 400');
    // Ollama's `{"error": "<text>"}` is wrapped; an OpenAI-shaped error is relayed as it came.
    expect(error.error).toMatchObject(provider === 'node' ? { code: 'upstream_error', message: expect.stringContaining('fake upstream error 400') } : { type: 'invalid_request_error' });

    const broken = await chat(`${provider}/broken`, { stream: true });
    expect(broken.status).toBe(200);
    const last = events(broken.text).at(-1);
    expect(last.error).toMatchObject({ code: 'stream_interrupted' });
    expectConforms('ErrorResponse', last, 'error event');
  });
});

describe('the gateway itself conforms to the OpenAI spec', () => {
  it('a refusal passed through from an OpenAI-compatible upstream', async () => {
    const res = await chat('cloud/refusal');
    expect(res.status).toBe(200);
    expectConforms('CreateChatCompletionResponse', JSON.parse(res.text), 'refusal');
  });

  it('GET /v1/models and GET /v1/models/{id}', async () => {
    const list = await call('/v1/models');
    expect(list.status).toBe(200);
    const body = JSON.parse(list.text);
    expect(body.data.length).toBeGreaterThan(5);
    expectConforms('ListModelsResponse', body, 'models');
    for (const id of ['mana/embed', 'cloud/text']) {
      const one = await call(`/v1/models/${id}`);
      expect(one.status).toBe(200);
      expectConforms('Model', JSON.parse(one.text), id);
    }
  });

  it.each([
    ['no API key (401)', () => call('/v1/models', { auth: false }), 401],
    ['invalid JSON (400)', () => call('/v1/chat/completions', { raw: '{"model":' }), 400],
    ['no messages (400)', () => call('/v1/chat/completions', { body: { model: 'mana/fast-text' } }), 400],
    ['empty embeddings input (400)', () => call('/v1/embeddings', { body: { model: 'mana/embed', input: [] } }), 400],
    ['an unknown model (404)', () => chat('nowhere/model'), 404],
    ['an unknown path (404)', () => call('/v1/nothing-here'), 404],
    ['a wrong method (405)', () => call('/v1/chat/completions', { method: 'GET' }), 405],
    ['every target failed (502)', () => chat('cloud/down'), 502],
    ['an upstream 400 with an HTML body (wrapped)', () => chat('cloud/html'), 400],
  ])('its error for %s', async (_what, send, status) => {
    const res = await send();
    expect(res.status).toBe(status);
    expectConforms('ErrorResponse', JSON.parse(res.text), `error ${status}`);
  });
});
