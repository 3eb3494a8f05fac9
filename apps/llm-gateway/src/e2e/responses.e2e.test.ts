/**
 * `POST /v1/responses` (OpenAI's Responses API) on the wire, through the built
 * gateway: every alias's first target is dead (a refused port), the next an
 * OpenAI-compatible fake, an Ollama fake (native /api/chat) or an Anthropic
 * fake. What a Responses client notices: statuses, X-Mana-LLM-* headers, the
 * response object, the exact event sequence of a stream with its numbering
 * and ids, the commit rule; what reached the upstream; and that records, the
 * log line and metrics say `api: "responses"`. Every answer and every event is
 * validated against OpenAI's published spec. Refusals and bad input:
 * responses-refusals.e2e.test.ts; the official clients: responses-sdk.e2e.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { eventSequence, expectConforms, expectConsistentStream, FUNCTION_CALL_EVENTS, lastSent, outputText, textEvents } from './responses-events.js';
import { responsesEvents } from './sse-frames.js';
import { ADMIN, storedRequest } from './usage-client.js';

const KEY = 'sk-mana-responses-e2e-3e8d';
const ANTHROPIC_KEY = 'sk-ant-responses-e2e-SECRET-77a1';
/** A 1×1 PNG. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const WEATHER = { type: 'function', name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const TOOL_CALLS = [
  { id: 'call_weather', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
  { id: 'call_time', function: { name: 'get_time', arguments: { zone: 'CET' } } },
];

let cloud: FakeUpstream;
let local: FakeUpstream;
let claude: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  local = await startFakeOllama({ models: ['gemma3:4b'] });
  claude = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
  cloud.on('m1', { kind: 'answer', content: 'Hello from m1', chunks: 3, usage: { prompt_tokens: 21, completion_tokens: 4 } });
  cloud.on('tools', { kind: 'answer', content: 'Let me check.', chunks: 2, toolCalls: TOOL_CALLS });
  cloud.on('long', { kind: 'answer', content: 'cut short', finishReason: 'length' });
  cloud.on('filtered', { kind: 'answer', content: 'partly', finishReason: 'content_filter' });
  cloud.on('cut', { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 1 });
  cloud.on('early', { kind: 'answer', content: 'never seen', errorEventAfterChunks: 0 });
  cloud.on('prose', { kind: 'answer', content: 'Sure! It is Paris.' });
  cloud.on('json', { kind: 'answer', content: '{"city":"Paris"}' });
  cloud.on('bad', { kind: 'status', status: 400, body: { error: { message: 'Upstream says: bad top_p', type: 'invalid_request_error', param: 'top_p', code: 'bad_top_p' } } });
  claude.on('claude-cache', { kind: 'answer', content: 'Cached hello', usage: { prompt_tokens: 9, completion_tokens: 6, cache_read_tokens: 2000, cache_creation_tokens: 300 } });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl, `  local: { type: ollama, base_url: "${local.url}" }\n  anthropic: { base_url: "${claude.url}" }\n`) +
    aliasesYaml(
      {
        'mana/tools': ['dead/m0', 'cloud/tools'],
        'mana/long': ['dead/m0', 'cloud/long'],
        'mana/filtered': ['dead/m0', 'cloud/filtered'],
        'mana/cut': ['dead/m0', 'cloud/cut'],
        'mana/early': ['dead/m0', 'cloud/early', 'cloud/m1'],
        'mana/structured': ['dead/m0', 'cloud/prose', 'cloud/json'],
        'mana/bad': ['dead/m0', 'cloud/bad'],
        'mana/round-trip': ['dead/m0', 'cloud/round-trip'],
        'mana/local': ['dead/m0', 'local/gemma3:4b'],
        'mana/cached': ['dead/m0', 'anthropic/claude-cache'],
      },
      ['dead/m0', 'cloud/m1'],
    ).replace('  mana/structured:\n', '  mana/structured:\n    fail_over_on: [invalid_json]\n');
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY, MANA_LLM_ADMIN_KEY: ADMIN, ANTHROPIC_API_KEY: ANTHROPIC_KEY } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([cloud?.close(), local?.close(), claude?.close()]);
});

function responses(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

/** A JSON answer: 200, conforming to the spec's `Response`. */
async function responseJson(body: Record<string, unknown>, headers?: Record<string, string>): Promise<{ res: Response; json: Json }> {
  const res = await responses(body, headers);
  const json = await res.json();
  expect(res.status, JSON.stringify(json)).toBe(200);
  expectConforms('Response', json, 'the response');
  return { res, json };
}

/** A stream's events, after checking it is one consistent, conforming stream; and its final response. */
async function responseStream(body: Record<string, unknown>): Promise<{ res: Response; events: Json[]; final: Json }> {
  const res = await responses({ ...body, stream: true });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events = responsesEvents(await res.text());
  return { res, events, final: expectConsistentStream(events) };
}

/** A chat message's text, whether the codec wrote a string or text parts. */
const textOf = (content: Json): string => (typeof content === 'string' ? content : content.map((p: Json) => p.text).join(''));

/** The same response with what differs per request (ids, times) left out. */
function withoutIds(response: Json): Json {
  const { id: _id, created_at: _created, completed_at: _completed, ...rest } = response;
  return { ...rest, output: response.output.map(({ id: _item, ...item }: Json) => item) };
}


describe('POST /v1/responses, JSON', () => {
  it("a string input after failover: OpenAI's response object, the alias as model, the upstream's usage, X-Mana-LLM-*", async () => {
    const before = Math.floor(Date.now() / 1000);
    const { res, json } = await responseJson(
      { model: 'mana/fast-text', instructions: 'Be brief.', input: 'Say hi', max_output_tokens: 64, temperature: 0.2, top_p: 0.9, user: 'user-42', metadata: { team: 'docs' }, store: false },
      { 'x-request-id': 'responses-json-1' },
    );
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toBe('responses-json-1');
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/fast-text');
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(json).toMatchObject({
      id: expect.stringMatching(/^resp_/),
      object: 'response',
      model: 'mana/fast-text',
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      metadata: { team: 'docs' },
      output: [{ type: 'message', id: expect.any(String), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello from m1', annotations: [] }] }],
      usage: { input_tokens: 21, output_tokens: 4, total_tokens: 25 },
    });
    expect(json.created_at).toBeGreaterThanOrEqual(before);
    expect(json.created_at).toBeLessThanOrEqual(Date.now() / 1000 + 1);

    const sent = lastSent(cloud);
    expect(sent).toMatchObject({ model: 'm1', stream: false, temperature: 0.2, top_p: 0.9, user: 'user-42' });
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(64);
    expect(sent.messages.map((m: Json) => [m.role, textOf(m.content)])).toEqual([
      [expect.stringMatching(/^(system|developer)$/), 'Be brief.'],
      ['user', 'Say hi'],
    ]);
    // Nothing of the Responses dialect reaches a chat completions server.
    for (const field of ['input', 'instructions', 'max_output_tokens', 'text', 'store', 'previous_response_id', 'reasoning']) expect(sent, field).not.toHaveProperty(field);
  });

  it('an item list: every role and content type reaches the upstream as chat messages, in order', async () => {
    const image = `data:image/png;base64,${PIXEL}`;
    const { json } = await responseJson({
      model: 'mana/vision',
      input: [
        { type: 'message', role: 'system', content: 'You are terse.' },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Answer in English.' }] },
        // An item without `type` is a message, as the SDKs and the AI SDK send them.
        { role: 'user', content: 'What is in these pictures?' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'Look:' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
            { type: 'input_image', image_url: image },
          ],
        },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Two images.' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'Describe them.' }] },
      ],
    });
    expect(outputText(json)).toBe('Hello from m1');
    const sent = lastSent(cloud).messages;
    expect(sent.map((m: Json) => m.role)).toEqual(['system', expect.stringMatching(/^(system|developer)$/), 'user', 'user', 'assistant', 'user']);
    expect([0, 1, 2, 4, 5].map((i) => textOf(sent[i].content))).toEqual(['You are terse.', 'Answer in English.', 'What is in these pictures?', 'Two images.', 'Describe them.']);
    expect(sent[3].content).toEqual([
      { type: 'text', text: 'Look:' },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
      { type: 'image_url', image_url: expect.objectContaining({ url: image }) },
    ]);
  });

  it("function calls follow the text as function_call items: the upstream's call ids, arguments as JSON text; tools and tool_choice translated", async () => {
    const { json } = await responseJson({
      model: 'mana/tools',
      input: 'Weather and time in Paris?',
      tools: [{ ...WEATHER, strict: true }, { type: 'function', name: 'get_time', parameters: { type: 'object' } }],
      tool_choice: 'required',
      parallel_tool_calls: true,
    });
    expect(json.output).toEqual([
      { type: 'message', id: expect.any(String), status: 'completed', role: 'assistant', content: [expect.objectContaining({ type: 'output_text', text: 'Let me check.' })] },
      { type: 'function_call', id: expect.any(String), call_id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', id: expect.any(String), call_id: 'call_time', name: 'get_time', arguments: '{"zone":"CET"}', status: 'completed' },
    ]);
    expect(new Set(json.output.map((o: Json) => o.id)).size).toBe(3);
    expect(json).toMatchObject({ status: 'completed', tool_choice: 'required', parallel_tool_calls: true, tools: [expect.objectContaining({ type: 'function', name: 'get_weather' }), expect.objectContaining({ name: 'get_time' })] });
    expect(lastSent(cloud)).toMatchObject({
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER.parameters, strict: true } },
        { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
      ],
      tool_choice: 'required',
      parallel_tool_calls: true,
    });

    await responseJson({ model: 'mana/tools', input: 'Weather?', tools: [WEATHER], tool_choice: { type: 'function', name: 'get_weather' }, parallel_tool_calls: false });
    expect(lastSent(cloud)).toMatchObject({ tool_choice: { type: 'function', function: { name: 'get_weather' } }, parallel_tool_calls: false });
  });

  it('a length stop is status incomplete (max_output_tokens), a filtered answer incomplete (content_filter); the text is kept', async () => {
    const { json: long } = await responseJson({ model: 'mana/long', input: 'Tell me everything', max_output_tokens: 3 });
    expect(long).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(outputText(long)).toBe('cut short');
    const { json: filtered } = await responseJson({ model: 'mana/filtered', input: 'Something filtered' });
    expect(filtered).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });

  it('text.format json_schema on an alias with fail_over_on: [invalid_json]: a prose answer fails over, the JSON one is the output', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const { res, json } = await responseJson({ model: 'mana/structured', input: 'Which city?', text: { format: { type: 'json_schema', name: 'city', schema, strict: true } } });
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/json');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('3');
    expect(JSON.parse(outputText(json))).toEqual({ city: 'Paris' });
    expect(json.text).toMatchObject({ format: { type: 'json_schema', name: 'city' } });
    expect(lastSent(cloud).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'city', schema, strict: true } });

    await responseJson({ model: 'mana/structured', input: 'Any JSON', text: { format: { type: 'json_object' } } });
    expect(lastSent(cloud).response_format).toEqual({ type: 'json_object' });
  });

  it("the cached tokens an upstream reports (here an anthropic target) are the usage's input_tokens_details.cached_tokens", async () => {
    const { res, json } = await responseJson({ model: 'mana/cached', input: 'Say hi', max_output_tokens: 100 });
    expect(res.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-cache');
    expect(outputText(json)).toBe('Cached hello');
    // The prompt as a whole (uncached + cache writes + cache reads), the reads also apart.
    expect(json.usage).toMatchObject({ input_tokens: 2309, input_tokens_details: { cached_tokens: 2000 }, output_tokens: 6, total_tokens: 2315 });
  });

  it("an upstream's refusal (400) keeps its status and OpenAI's error shape, and is not failed over", async () => {
    const res = await responses({ model: 'mana/bad', input: 'hi', top_p: 0.5 });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/bad');
    const body = (await res.json()) as Json;
    expectConforms('ErrorResponse', body, 'the relayed refusal');
    expect(body.error).toMatchObject({ message: 'Upstream says: bad top_p', type: 'invalid_request_error', param: 'top_p' });
  });
});

describe('POST /v1/responses, streams', () => {
  it("text: OpenAI's event order, numbered from 0, every id that of the final response, which is the JSON answer's", async () => {
    const { res, events, final } = await responseStream({ model: 'mana/fast-text', instructions: 'Be brief.', input: 'Say hi' });
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(eventSequence(events)).toEqual([...textEvents(3), 'response.completed']);
    expect(events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('')).toBe('Hello from m1');
    expect(final).toMatchObject({ status: 'completed', model: 'mana/fast-text', usage: { input_tokens: 21, output_tokens: 4, total_tokens: 25 } });
    expect(lastSent(cloud)).toMatchObject({ model: 'm1', stream: true });
    const { json } = await responseJson({ model: 'mana/fast-text', instructions: 'Be brief.', input: 'Say hi' });
    expect(withoutIds(final)).toEqual(withoutIds(json));
  });

  it('text, then two function calls: each item added, its argument deltas, done, in output order', async () => {
    const { events, final } = await responseStream({ model: 'mana/tools', input: 'Weather and time?', tools: [WEATHER, { type: 'function', name: 'get_time', parameters: { type: 'object' } }] });
    expect(eventSequence(events)).toEqual([
      ...textEvents(2),
      'response.output_item.added 1',
      'response.function_call_arguments.delta 1',
      'response.function_call_arguments.done 1',
      'response.output_item.done 1',
      'response.output_item.added 2',
      'response.function_call_arguments.delta 2',
      'response.function_call_arguments.done 2',
      'response.output_item.done 2',
      'response.completed',
    ]);
    expect(final.output.slice(1)).toEqual([
      { type: 'function_call', id: expect.any(String), call_id: 'call_weather', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', id: expect.any(String), call_id: 'call_time', name: 'get_time', arguments: '{"zone":"CET"}', status: 'completed' },
    ]);
    // Announced as in progress, with the call id a client matches its output to from the start.
    expect(events.find((e) => e.type === 'response.output_item.added' && e.output_index === 1).item).toMatchObject({ type: 'function_call', call_id: 'call_weather', status: 'in_progress' });
  });

  it('a target that fails before its first delta is failed over: the client gets one clean stream from the next', async () => {
    const before = cloud.count('early');
    const { res, events, final } = await responseStream({ model: 'mana/early', input: 'Say hi' });
    expect(cloud.count('early')).toBe(before + 1);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('3');
    expect(eventSequence(events)).toEqual([...textEvents(3), 'response.completed']);
    expect(outputText(final)).toBe('Hello from m1');
  });

  it('a stream cut after its first delta ends with response.failed (or error), never response.completed', async () => {
    const res = await responses({ model: 'mana/cut', input: 'Count', stream: true }, { 'x-request-id': 'responses-cut-1' });
    expect(res.status).toBe(200);
    const events = responsesEvents(await res.text());
    expect(eventSequence(events).slice(0, 5)).toEqual(textEvents(1).slice(0, 5));
    expect(events[4].delta).toBe('one ');
    const last = events.at(-1)!;
    expect(['response.failed', 'error']).toContain(last.type);
    expect(events.map((e) => e.type)).not.toContain('response.completed');
    expect(events.map((e) => e.type)).not.toContain('response.output_text.done');
    for (const [i, event] of events.entries()) expectConforms('ResponseStreamEvent', event, `event ${i} (${event.type})`);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    if (last.type === 'response.failed') {
      expect(last.response).toMatchObject({ id: events[0].response.id, status: 'failed', error: { message: expect.any(String) } });
    } else {
      expect(last.message).toEqual(expect.any(String));
    }
    expect(await storedRequest(gw, 'responses-cut-1')).toMatchObject({ api: 'responses', code: 'stream_interrupted' });
  });

  it('a length stop ends with response.incomplete (max_output_tokens)', async () => {
    const { events, final } = await responseStream({ model: 'mana/long', input: 'Tell me everything', max_output_tokens: 3 });
    expect(events.at(-1)!.type).toBe('response.incomplete');
    expect(final).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(outputText(final)).toBe('cut short');
  });
});

describe.each([
  { dialect: 'OpenAI-compatible', alias: 'mana/round-trip', target: 'cloud/round-trip', fake: () => cloud, model: 'round-trip' },
  { dialect: 'Ollama (native /api/chat)', alias: 'mana/local', target: 'local/gemma3:4b', fake: () => local, model: 'gemma3:4b' },
])('through an $dialect target', ({ alias, target, fake, model }) => {
  it('a text answer, JSON and streamed, each conforming, the stream ending as the JSON answer', async () => {
    fake().on(model, { kind: 'answer', content: 'Hello there', chunks: 2 });
    const { res, json } = await responseJson({ model: alias, input: 'Say hi' });
    expect(res.headers.get('x-mana-llm-resolved')).toBe(target);
    expect(outputText(json)).toBe('Hello there');
    const { events, final } = await responseStream({ model: alias, input: 'Say hi' });
    expect(eventSequence(events)).toEqual([...textEvents(2), 'response.completed']);
    expect(withoutIds(final)).toEqual(withoutIds(json));
  });

  it('a function call, streamed: one function_call item, its arguments, the call id of the final response', async () => {
    fake().on(model, { kind: 'answer', toolCalls: [{ id: 'call_one', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] });
    const { events, final } = await responseStream({ model: alias, input: 'Weather in Oslo?', tools: [WEATHER] });
    expect(eventSequence(events)).toEqual(FUNCTION_CALL_EVENTS);
    expect(final.output).toEqual([{ type: 'function_call', id: expect.any(String), call_id: expect.stringMatching(/^call_/), name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' }]);
    expect(JSON.parse(events[3].delta)).toEqual({ city: 'Oslo' });
  });
});

describe('the inbound API on records, log lines and metrics', () => {
  it('the usage record, the log line and mana_llm_requests_total say api "responses"', async () => {
    const json = await responses({ model: 'mana/fast-text', input: 'hi' }, { 'x-request-id': 'responses-api-1' });
    const stream = await responses({ model: 'mana/fast-text', input: 'hi', stream: true }, { 'x-request-id': 'responses-api-2' });
    expect([json.status, stream.status]).toEqual([200, 200]);
    await Promise.all([json.text(), stream.text()]);
    expect(await storedRequest(gw, 'responses-api-1')).toMatchObject({ api: 'responses', alias: 'mana/fast-text', target: 'cloud/m1', status: 200, prompt_tokens: 21, completion_tokens: 4, key: expect.stringMatching(/^k:[0-9a-f]{12}$/) });
    expect(await storedRequest(gw, 'responses-api-2')).toMatchObject({ api: 'responses', status: 200, stream: true });
    const line = gw.logs.find((l) => l.msg === 'request' && l.req_id === 'responses-api-1');
    expect(line).toMatchObject({ api: 'responses', path: '/v1/responses', status: 200 });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/mana_llm_requests_total\{api="responses",alias="mana\/fast-text",target="cloud\/m1",status="200"\} \d+/);
    expect(metrics).toMatch(/mana_llm_time_to_first_byte_seconds_count\{api="responses",alias="mana\/fast-text",stream="true"\} \d+/);
    // The keys never appear: not the client's, not the upstream's.
    expect(JSON.stringify(gw.logs)).not.toContain(KEY);
    expect(JSON.stringify(gw.logs)).not.toContain(ANTHROPIC_KEY);
  });
});
