/**
 * An alias whose first target is dead and whose second is `anthropic/…`,
 * through the built gateway: the official `openai` SDK asks in chat
 * completions, the router speaks Messages to a fake Anthropic on loopback,
 * and the client gets a chat completion (streamed or not) that OpenAI's
 * published spec accepts, with the anthropic target named in
 * X-Mana-LLM-Resolved. The Anthropic key never leaves the gateway.
 */
import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, REPO_ROOT, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { specViolations } from './openai-spec.js';

const KEY = 'sk-ant-e2e-SECRET-4d1c9e7a';
const TARGET = 'anthropic/claude-sonnet-4-5';

let claude: FakeUpstream;
let gw: GatewayProcess;
let client: OpenAI;
const bodies: string[] = []; // every response body seen, for the secret check

const weather = {
  type: 'function' as const,
  function: { name: 'weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

beforeAll(async () => {
  claude = await startFakeAnthropic({ apiKey: KEY });
  claude.on('claude-sonnet-4-5', { kind: 'answer', content: 'Oslo is cold today.', chunks: 3, usage: { prompt_tokens: 11, completion_tokens: 6, cache_read_tokens: 4 } });
  claude.on('claude-tools', {
    kind: 'answer',
    content: 'Checking both.',
    chunks: 2,
    toolCalls: [
      { id: 'toolu_oslo', function: { name: 'weather', arguments: { city: 'Oslo' } } },
      { id: 'toolu_rome', function: { name: 'weather', arguments: { city: 'Rome' } } },
    ],
  });
  claude.on('claude-echo', { kind: 'status', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: `bad request for key ${KEY}` } } });
  const dead = await refusingPort();
  const config =
    `settings:\n  probe_interval: 60s\n` +
    `providers:\n` +
    // Never benched by its breaker: every request meets the refusal itself, then fails over.
    `  dead: { type: openai, base_url: "http://127.0.0.1:${dead}/v1", api_key_required: false, settings: { failure_threshold: 1000 } }\n` +
    // The built-in provider on the fake; its key comes from ANTHROPIC_API_KEY as in production.
    `  anthropic: { base_url: "${claude.url}" }\n` +
    aliasesYaml({ 'mana/reasoning': ['dead/m', TARGET], 'mana/tools': ['dead/m', 'anthropic/claude-tools'], 'mana/echo': ['dead/m', 'anthropic/claude-echo'] }, [TARGET]);
  gw = await spawnGateway({ config, env: { ANTHROPIC_API_KEY: KEY } });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'not-needed-auth-off', maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await claude?.close();
});

describe('chat completions served by an anthropic target', () => {
  it('non-streaming: 200 after the dead target, resolved to the anthropic target, a spec-valid chat.completion', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'mana/reasoning', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Oslo?' }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-mana-llm-resolved')).toBe(TARGET);
    expect(response.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(data.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Oslo is cold today.' } });
    expect(data.usage).toMatchObject({ prompt_tokens: 15, completion_tokens: 6, total_tokens: 21, prompt_tokens_details: { cached_tokens: 4 } });
    expect(specViolations('CreateChatCompletionResponse', data)).toEqual([]);
    bodies.push(JSON.stringify(data));
    // Upstream it was a Messages request with the key in x-api-key.
    const sent = claude.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 4096, system: [{ type: 'text', text: 'Be brief.' }] });
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.target === TARGET && l.stream === false);
    expect(line.attempts).toEqual([
      expect.objectContaining({ target: 'dead/m', outcome: 'failed', reason: 'connect_refused' }),
      expect.objectContaining({ target: TARGET, outcome: 'ok' }),
    ]);
  });

  it('non-streaming tool calls: ids, names and JSON-string arguments; finish_reason tool_calls', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'mana/tools', messages: [{ role: 'user', content: 'Oslo and Rome?' }], tools: [weather] })
      .withResponse();
    expect(response.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-tools');
    expect(data.choices[0]!.finish_reason).toBe('tool_calls');
    expect(data.choices[0]!.message.content).toBe('Checking both.');
    expect(data.choices[0]!.message.tool_calls).toEqual([
      { id: 'toolu_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      { id: 'toolu_rome', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
    ]);
    expect(specViolations('CreateChatCompletionResponse', data)).toEqual([]);
    expect(claude.requests.at(-1)!.body).toMatchObject({
      tools: [{ name: 'weather', description: 'Weather in a city', input_schema: weather.function.parameters }],
      tool_choice: { type: 'auto' },
    });
  });

  it('a tool round trip: the tool results go back as one user turn of tool_result blocks', async () => {
    const first = await client.chat.completions.create({ model: 'mana/tools', messages: [{ role: 'user', content: 'Oslo and Rome?' }], tools: [weather] });
    const calls = first.choices[0]!.message.tool_calls!;
    await client.chat.completions.create({
      model: 'mana/reasoning',
      tools: [weather],
      messages: [
        { role: 'user', content: 'Oslo and Rome?' },
        first.choices[0]!.message,
        ...calls.map((call, i) => ({ role: 'tool' as const, tool_call_id: call.id, content: i === 0 ? '4 °C' : '21 °C' })),
      ],
    });
    expect((claude.requests.at(-1)!.body as Json).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Oslo and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_oslo', name: 'weather', input: { city: 'Oslo' } },
          { type: 'tool_use', id: 'toolu_rome', name: 'weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_oslo', content: '4 °C' },
          { type: 'tool_result', tool_use_id: 'toolu_rome', content: '21 °C' },
        ],
      },
    ]);
  });

  it('streaming text: the SDK reads chat.completion.chunk events, spec-valid, with usage when asked for', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'mana/reasoning', messages: [{ role: 'user', content: 'Weather?' }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    expect(response.headers.get('x-mana-llm-resolved')).toBe(TARGET);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const chunks: Json[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Oslo is cold today.');
    expect(chunks.find((c) => c.choices[0]?.finish_reason !== null && c.choices.length > 0)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 15, completion_tokens: 6, prompt_tokens_details: { cached_tokens: 4 } } });
    for (const chunk of chunks) expect(specViolations('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    expect(claude.requests.at(-1)!.body).toMatchObject({ stream: true });
  });

  it('streaming tool calls: the SDK assembles each call from its deltas, in order', async () => {
    const stream = client.chat.completions.stream({ model: 'mana/tools', messages: [{ role: 'user', content: 'Oslo and Rome?' }], tools: [weather] });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]!.message.content).toBe('Checking both.');
    expect(completion.choices[0]!.message.tool_calls).toEqual([
      { id: 'toolu_oslo', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
      { id: 'toolu_rome', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
    ]);
  });

  it("passes the client's anthropic-beta header on to the anthropic target", async () => {
    await client.chat.completions.create({ model: 'mana/reasoning', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } });
    expect(claude.requests.at(-1)!.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
  });

  it('an Anthropic refusal of the request is relayed with its status, the key cut out', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    bodies.push(text);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-echo');
    expect(JSON.parse(text)).toMatchObject({ error: { type: 'invalid_request_error', message: 'bad request for key [redacted]' } });
  });

  it('the key appears in no response, log line or metric', async () => {
    bodies.push(await (await fetch(`${gw.url}/v1/health`)).text());
    bodies.push(await (await fetch(`${gw.url}/metrics`)).text());
    for (const body of bodies) expect(body).not.toContain(KEY);
    expect(gw.output()).not.toContain(KEY);
  });
});

describe('the shipped aliases.yaml without ANTHROPIC_API_KEY', () => {
  it('leaves the anthropic target of mana/reasoning unconfigured: skipped without a call, like the other cloud providers', async () => {
    const shipped = await readFile(`${REPO_ROOT}apps/llm-gateway/aliases.yaml`, 'utf8');
    const dead = await refusingPort();
    const bare = await spawnGateway({ config: shipped, env: { OLLAMA_URL: `http://127.0.0.1:${dead}` } });
    try {
      const aliases = (await (await fetch(`${bare.url}/v1/aliases`)).json()) as Json;
      const chain = aliases.data.find((a: Json) => a.alias === 'mana/reasoning').chain as Json[];
      expect(chain.at(-1)).toMatchObject({ target: TARGET, state: 'unconfigured', reason: 'missing api key (ANTHROPIC_API_KEY)' });
      const res = await fetch(`${bare.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mana/reasoning', messages: [{ role: 'user', content: 'hi' }] }),
      });
      // Ollama (dead here) was the one target called; every cloud target was skipped.
      expect(res.status).toBe(502);
      const line = await bare.waitForLog((l) => l.msg === 'request' && l.alias === 'mana/reasoning');
      expect((line.attempts as Json[]).at(-1)).toMatchObject({ target: TARGET, outcome: 'skipped', reason: 'unconfigured: missing api key (ANTHROPIC_API_KEY)' });
    } finally {
      await bare.stop();
    }
  });
});
