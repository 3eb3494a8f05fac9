/**
 * `POST /v1/messages` and `/v1/messages/count_tokens` on the wire, through the
 * built gateway: every alias's first target is dead (a refused port), the
 * next an OpenAI-compatible fake (or an Ollama fake). What an Anthropic client
 * notices: statuses, headers, the message JSON, the exact SSE event sequence,
 * Anthropic-shaped errors for bad input; what reached the upstream; and that
 * records, the log line and metrics name the inbound API. The official SDKs
 * as clients: messages-sdk.e2e.test.ts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimatePromptTokens, type ChatRequestBody } from '@mana/llm-router';
import { refusingPort, startFakeOllama, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { postInPieces } from './body-in-pieces.js';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { frames, sequence } from './sse-frames.js';

const KEY = 'sk-mana-messages-e2e-7f3a';
const ADMIN = 'admin-messages-e2e-91c2';
const CLAUDE_CODE = JSON.parse(readFileSync(new URL('./fixtures/claude-code-messages.json', import.meta.url), 'utf8')) as Json;

let cloud: FakeUpstream;
let local: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  local = await startFakeOllama({ models: ['gemma3:4b'] });
  cloud.on('m1', { kind: 'answer', content: 'Hello from m1', chunks: 3, usage: { prompt_tokens: 21, completion_tokens: 4 } });
  cloud.on('tools', {
    kind: 'answer',
    content: 'Let me check.',
    chunks: 2,
    toolCalls: [
      { id: 'call_weather', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_time', function: { name: 'get_time', arguments: { zone: 'CET' } } },
    ],
  });
  cloud.on('stop', { kind: 'answer', content: 'one two', stopSequence: 'END' });
  cloud.on('long', { kind: 'answer', content: 'cut short', finishReason: 'length' });
  cloud.on('cut', { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 1 });
  cloud.on('bad', { kind: 'status', status: 400, body: { error: { message: 'Upstream says: bad top_k', type: 'invalid_request_error', param: 'top_k', code: 'bad_top_k' } } });
  local.on('gemma3:4b', { kind: 'answer', toolCalls: [{ function: { name: 'get_weather', arguments: { city: 'Rome' } } }] });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl, `  local: { type: ollama, base_url: "${local.url}" }\n`) +
    aliasesYaml(
      {
        'mana/tools': ['dead/m0', 'cloud/tools'],
        'mana/stop': ['cloud/stop'],
        'mana/long': ['cloud/long'],
        'mana/cut': ['dead/m0', 'cloud/cut'],
        'mana/bad': ['cloud/bad'],
        'mana/local': ['dead/m0', 'local/gemma3:4b'],
      },
      ['dead/m0', 'cloud/m1'],
    );
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY, MANA_LLM_ADMIN_KEY: ADMIN } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([cloud?.close(), local?.close()]);
});

const USER = [{ role: 'user', content: 'hi' }];

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

const messages = (body: unknown, headers?: Record<string, string>): Promise<Response> => post('/v1/messages', body, headers);

describe('POST /v1/messages, JSON', () => {
  it("a text answer after failover: Anthropic's message, the alias as model, usage from the upstream, request ids and X-Mana-LLM-*", async () => {
    const res = await messages(
      {
        model: 'mana/fast-text',
        max_tokens: 64,
        system: 'Be brief.',
        messages: USER,
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['###'],
        metadata: { user_id: 'user-42' },
      },
      { 'x-request-id': 'msg-json-1' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toBe('msg-json-1');
    expect(res.headers.get('request-id')).toBe('msg-json-1');
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/fast-text');
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    const body = await res.json();
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_[0-9a-z]+$/),
      type: 'message',
      role: 'assistant',
      model: 'mana/fast-text',
      content: [{ type: 'text', text: 'Hello from m1' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 21, output_tokens: 4 },
    });
    expect(cloud.requests.at(-1)!.body).toEqual({
      model: 'm1',
      max_tokens: 64,
      stream: false,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop: ['###'],
      user: 'user-42',
    });
  });

  it('tool calls become tool_use blocks after the text (input objects, the upstream ids), stop_reason tool_use', async () => {
    const res = await messages({ model: 'mana/tools', max_tokens: 100, messages: USER, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_weather', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_time', name: 'get_time', input: { zone: 'CET' } },
      ],
      stop_reason: 'tool_use',
    });
  });

  it('a stop sequence the upstream names (vLLM) is stop_sequence with the sequence; a length stop is max_tokens', async () => {
    const stopped = await (await messages({ model: 'mana/stop', max_tokens: 10, messages: USER, stop_sequences: ['END'] })).json();
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    const long = await (await messages({ model: 'mana/long', max_tokens: 2, messages: USER })).json();
    expect(long).toMatchObject({ stop_reason: 'max_tokens', stop_sequence: null });
  });

  it("an upstream's refusal (400) comes in Anthropic's shape with its status and message, not failed over", async () => {
    const res = await messages({ model: 'mana/bad', max_tokens: 10, messages: USER, top_k: 9 });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/bad');
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'Upstream says: bad top_k', code: 'upstream_error' } });
  });

  it('a tool round trip on an Ollama target: tool_use out, tool_result back as a tool message', async () => {
    const first: Json = await (await messages({ model: 'mana/local', max_tokens: 50, messages: [{ role: 'user', content: 'Weather in Rome?' }], tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] })).json();
    expect(first).toMatchObject({ content: [{ type: 'tool_use', name: 'get_weather', input: { city: 'Rome' } }], stop_reason: 'tool_use' });
    const call = first.content[0];
    local.on('gemma3:4b', { kind: 'answer', content: 'Sunny in Rome.' });
    const second = await messages({
      model: 'mana/local',
      max_tokens: 50,
      messages: [
        { role: 'user', content: 'Weather in Rome?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: [{ type: 'text', text: '22 °C, sunny' }] }] },
      ],
      tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
    });
    expect(await second.json()).toMatchObject({ content: [{ type: 'text', text: 'Sunny in Rome.' }], stop_reason: 'end_turn' });
    expect((local.requests.at(-1)!.body as Json).messages).toEqual([
      { role: 'user', content: 'Weather in Rome?' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Rome' } } }] },
      { role: 'tool', content: '22 °C, sunny', tool_name: 'get_weather' },
    ]);
  });
});

describe('POST /v1/messages, streams', () => {
  it("text, then two tool calls: Anthropic's exact event sequence, indexes, deltas and usage", async () => {
    const body = { model: 'mana/tools', max_tokens: 100, stream: true, messages: USER, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] };
    const res = await messages(body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    const all = await frames(res);
    expect(sequence(all)).toEqual([
      'message_start',
      'content_block_start 0',
      'ping',
      'content_block_delta 0',
      'content_block_delta 0',
      'content_block_stop 0',
      'content_block_start 1',
      'content_block_delta 1',
      'content_block_stop 1',
      'content_block_start 2',
      'content_block_delta 2',
      'content_block_stop 2',
      'message_delta',
      'message_stop',
    ]);
    const translated: ChatRequestBody = { messages: USER, max_tokens: 100, stream: true, tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }] };
    expect(all[0]!.data).toEqual({
      type: 'message_start',
      message: {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'assistant',
        model: 'mana/tools',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // The upstream reports usage only at the end: the gateway's estimate, never 0.
        usage: { input_tokens: estimatePromptTokens(translated), output_tokens: 0 },
      },
    });
    expect(estimatePromptTokens(translated)).toBeGreaterThan(0);
    expect(all[1]!.data).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(all.filter((f) => f.event === 'content_block_delta' && f.data.index === 0).map((f) => f.data.delta.text).join('')).toBe('Let me check.');
    expect(all[6]!.data).toEqual({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'call_weather', name: 'get_weather', input: {} } });
    expect(all[7]!.data).toEqual({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } });
    expect(all[9]!.data.content_block).toEqual({ type: 'tool_use', id: 'call_time', name: 'get_time', input: {} });
    expect(all[10]!.data.delta).toEqual({ type: 'input_json_delta', partial_json: '{"zone":"CET"}' });
    expect(all.at(-2)!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 10, output_tokens: 4 },
    });
    expect(all.at(-1)!.data).toEqual({ type: 'message_stop' });
  });

  it("Claude Code's request (system blocks with cache_control, thinking, tools, metadata, Bearer token, ?beta=true) through an OpenAI-compatible first target", async () => {
    const before = cloud.count('m1');
    const res = await messages(CLAUDE_CODE, {
      'x-api-key': '',
      authorization: `Bearer ${KEY}`,
      'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14',
    });
    // Claude Code posts to /v1/messages?beta=true: the query string is not part of the route.
    const viaBeta = await fetch(`${gw.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(CLAUDE_CODE),
    });
    for (const r of [res, viaBeta]) {
      expect(r.status).toBe(200);
      expect(sequence(await frames(r))).toEqual([
        'message_start',
        'content_block_start 0',
        'ping',
        'content_block_delta 0',
        'content_block_delta 0',
        'content_block_delta 0',
        'content_block_stop 0',
        'message_delta',
        'message_stop',
      ]);
    }
    expect(cloud.count('m1')).toBe(before + 2);
    const sent = cloud.requests.at(-1)!.body as Json;
    // Nothing an OpenAI-compatible server cannot take: no thinking, no cache_control, no Anthropic fields.
    expect(JSON.stringify(sent)).not.toMatch(/cache_control|thinking|budget_tokens|input_schema|tool_use|metadata/);
    expect(sent).toEqual({
      model: 'm1',
      max_tokens: 32000,
      stream: true,
      stream_options: { include_usage: true },
      temperature: 1,
      user: CLAUDE_CODE.metadata.user_id,
      messages: [
        { role: 'system', content: CLAUDE_CODE.system.map((b: Json) => b.text).join('\n') },
        { role: 'user', content: CLAUDE_CODE.messages[0].content.map((b: Json) => ({ type: 'text', text: b.text })) },
        {
          role: 'assistant',
          content: "I'll list the files in src.",
          tool_calls: [{ id: 'toolu_01QyDhwHSBHMRoGD5Pjnt1Zw', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls src","description":"List files in src"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_01QyDhwHSBHMRoGD5Pjnt1Zw', content: 'index.ts\nserver.ts' },
      ],
      tools: CLAUDE_CODE.tools.map((t: Json) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } })),
    });
  });

  it('a stream cut after its first delta ends with event: error (api_error), never message_stop', async () => {
    const res = await messages({ model: 'mana/cut', max_tokens: 20, stream: true, messages: USER });
    expect(res.status).toBe(200);
    const all = await frames(res);
    expect(sequence(all)).toEqual(['message_start', 'content_block_start 0', 'ping', 'content_block_delta 0', 'error']);
    expect(all.at(-1)!.data).toEqual({ type: 'error', error: { type: 'api_error', message: expect.any(String), code: 'stream_interrupted', attempts: expect.any(Array) } });
  });

  it('an Ollama target streams a tool call as one tool_use block', async () => {
    local.on('gemma3:4b', { kind: 'answer', toolCalls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] });
    const all = await frames(await messages({ model: 'mana/local', max_tokens: 50, stream: true, messages: USER, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] }));
    expect(sequence(all)).toEqual(['message_start', 'content_block_start 0', 'ping', 'content_block_delta 0', 'content_block_stop 0', 'message_delta', 'message_stop']);
    expect(all[1]!.data.content_block).toMatchObject({ type: 'tool_use', name: 'get_weather', id: expect.any(String) });
    expect(JSON.parse(all[3]!.data.delta.partial_json)).toEqual({ city: 'Oslo' });
    expect(all[5]!.data.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
  });
});

describe('bad input: an Anthropic-shaped 4xx naming what is wrong', () => {
  const image = (data: string) => ({ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] });
  it.each([
    { what: 'max_tokens missing', body: { messages: USER }, status: 400, param: 'max_tokens', says: 'max_tokens' },
    { what: 'max_tokens 1e12', body: { max_tokens: 1e12, messages: USER }, status: 400, param: 'max_tokens', says: 'max_tokens' },
    { what: 'max_tokens 0', body: { max_tokens: 0, messages: USER }, status: 400, param: 'max_tokens', says: 'max_tokens' },
    { what: 'messages empty', body: { max_tokens: 5, messages: [] }, status: 400, param: 'messages', says: 'messages' },
    { what: 'messages missing', body: { max_tokens: 5 }, status: 400, param: 'messages', says: 'messages' },
    {
      what: 'a tool_result without its tool_use',
      body: { max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_nowhere', content: 'x' }] }] },
      status: 400,
      param: 'messages[0].content[0].tool_use_id',
      says: 'toolu_nowhere',
    },
    { what: 'an unknown block type', body: { max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'hologram', text: 'x' }] }] }, status: 400, param: 'messages[0].content[0].type', says: 'hologram' },
    { what: 'a document block', body: { max_tokens: 5, messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] }, status: 400, param: 'messages[0].content[0].type', says: 'document' },
    { what: 'an image that is not base64', body: { max_tokens: 5, messages: [image('not base64!')] }, status: 400, param: 'messages[0].content[0].source.data', says: 'base64' },
    { what: 'a role that is not user, assistant or system', body: { max_tokens: 5, messages: [{ role: 'developer', content: 'x' }] }, status: 400, param: 'messages[0].role', says: "role 'developer' is not supported" },
    { what: 'a server tool on an alias without an anthropic target', body: { max_tokens: 5, messages: USER, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, status: 400, param: 'tools[0].type', says: 'web_search_20250305' },
    { what: 'a model that is no alias', body: { model: 'mana/nope', max_tokens: 5, messages: USER }, status: 404, param: undefined, says: 'mana/nope' },
    { what: 'a body that is not JSON', body: '{"max_tokens": ', status: 400, param: undefined, says: 'JSON' },
  ])('$what → $status', async ({ body, status, param, says }) => {
    const res = await messages(body);
    expect(res.status).toBe(status);
    expect(res.headers.get('request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const json: Json = await res.json();
    expect(json).toMatchObject({ type: 'error', error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message: expect.stringContaining(says) } });
    if (param !== undefined) expect(json.error.param).toBe(param);
  });

  it('model missing: the default alias applies, as on chat', async () => {
    const res = await messages({ max_tokens: 5, messages: USER });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/fast-text');
    expect(((await res.json()) as Json).model).toBe('mana/fast-text');
  });

  it('100 MB of blocks: 413 request_too_large under the body limit chat has, the rest never read', async () => {
    const { status, body } = await postInPieces({
      url: `${gw.url}/v1/messages`,
      headers: { 'x-api-key': KEY },
      head: '{"max_tokens": 5, "messages": [{"role": "user", "content": [',
      item: JSON.stringify({ type: 'text', text: 'z'.repeat(1024 * 1024 - 40) }),
      count: 100,
      tail: ']}]}',
    });
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ type: 'error', error: { type: 'request_too_large', code: 'request_too_large' } });
  });

  it('no key → 401 authentication_error; a wrong key → 401; x-api-key and Authorization: Bearer both pass', async () => {
    for (const headers of [{ 'x-api-key': '' }, { 'x-api-key': 'wrong' }, { 'x-api-key': '', authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const res = await messages({ max_tokens: 5, messages: USER }, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', message: expect.stringContaining('API key') } });
    }
    expect((await messages({ max_tokens: 5, messages: USER }, { 'x-api-key': KEY })).status).toBe(200);
    expect((await messages({ max_tokens: 5, messages: USER }, { 'x-api-key': '', authorization: `Bearer ${KEY}` })).status).toBe(200);
  });
});

describe('POST /v1/messages/count_tokens', () => {
  it("the gateway's estimate of the request as the first usable target gets it; nothing is sent upstream", async () => {
    const before = cloud.requests.length;
    const res = await post('/v1/messages/count_tokens', { model: 'mana/tools', system: 'Be brief.', messages: USER, tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
    const expected = estimatePromptTokens({
      messages: [{ role: 'system', content: 'Be brief.' }, ...USER],
      stream: false,
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, description: 'Weather' } }],
    });
    expect(await res.json()).toEqual({ input_tokens: expected });
    expect(expected).toBeGreaterThan(10);
    expect(cloud.requests.length).toBe(before);
  });

  it('the Claude Code request counts to more than its text alone; a request it cannot count is a 4xx, never a 0', async () => {
    const { max_tokens: _max, stream: _stream, ...countable } = CLAUDE_CODE;
    const counted: Json = await (await post('/v1/messages/count_tokens', countable)).json();
    expect(counted.input_tokens).toBeGreaterThan(100);
    for (const [body, status] of [
      [{ model: 'mana/nope', messages: USER }, 404],
      [{ model: 'mana/embed', messages: USER }, 400],
      [{ messages: [] }, 400],
      [{ messages: [{ role: 'user', content: [{ type: 'hologram' }] }] }, 400],
    ] as const) {
      const res = await post('/v1/messages/count_tokens', body);
      expect(res.status).toBe(status);
      expect(((await res.json()) as Json).type).toBe('error');
    }
    const refused = await post('/v1/messages/count_tokens', { messages: USER }, { 'x-api-key': 'wrong' });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });

  it('each count is a request of its own inbound API, count_tokens: in mana_llm_requests_total, on a log line and a usage record, refusals too; nothing routed', async () => {
    const counted = await post('/v1/messages/count_tokens', { model: 'mana/fast-text', messages: USER }, { 'x-request-id': 'count-1' });
    const refused = await post('/v1/messages/count_tokens', { messages: USER }, { 'x-api-key': 'wrong', 'x-request-id': 'count-refused-1' });
    expect([counted.status, refused.status]).toEqual([200, 401]);
    // Answered as before: the ids, no X-Mana-LLM-* (nothing was resolved).
    expect(counted.headers.get('request-id')).toBe('count-1');
    expect(refused.headers.get('request-id')).toBe('count-refused-1');
    expect(counted.headers.get('x-mana-llm-resolved')).toBeNull();
    await Promise.all([counted.text(), refused.text()]);

    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === 'count-1');
    expect(line).toMatchObject({ level: 'info', api: 'count_tokens', method: 'POST', path: '/v1/messages/count_tokens', status: 200, model: 'mana/fast-text' });
    expect(line).not.toHaveProperty('target');
    expect(line).not.toHaveProperty('tokens');
    expect(await gw.waitForLog((l) => l.msg === 'request' && l.req_id === 'count-refused-1')).toMatchObject({ api: 'count_tokens', status: 401, code: 'invalid_api_key' });

    const deadline = Date.now() + 8_000;
    let stored: Json[] = [];
    while (Date.now() < deadline) {
      const res = await fetch(`${gw.url}/admin/usage/requests?limit=100`, { headers: { authorization: `Bearer ${ADMIN}` } });
      stored = ((await res.json()) as Json).data;
      if (['count-1', 'count-refused-1'].every((id) => stored.some((r) => r.request_id === id))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(stored.find((r) => r.request_id === 'count-1')).toMatchObject({
      api: 'count_tokens',
      model: 'mana/fast-text',
      alias: null,
      target: null,
      status: 200,
      prompt_tokens: null,
      key: expect.stringMatching(/^k:[0-9a-f]{12}$/),
    });
    expect(stored.find((r) => r.request_id === 'count-refused-1')).toMatchObject({ api: 'count_tokens', status: 401, code: 'invalid_api_key' });

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/mana_llm_requests_total\{api="count_tokens",alias="none",target="none",status="200"\} [1-9]\d*\n/);
    expect(metrics).toMatch(/mana_llm_requests_total\{api="count_tokens",alias="none",target="none",status="401"\} [1-9]\d*\n/);
  });
});

describe('the inbound API on records, log lines and metrics; chat completions unchanged', () => {
  it("chat completions still answer OpenAI's shape, streaming or not", async () => {
    const json = await post('/v1/chat/completions', { model: 'mana/fast-text', messages: USER }, { authorization: `Bearer ${KEY}` });
    expect(json.status).toBe(200);
    expect(json.headers.get('request-id')).toBeNull();
    expect(await json.json()).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'Hello from m1' } }] });
    const stream = await (await post('/v1/chat/completions', { model: 'mana/fast-text', stream: true, messages: USER })).text();
    expect(stream.startsWith('data: {')).toBe(true);
    expect(stream.trim().endsWith('data: [DONE]')).toBe(true);
  });

  it('usage records, log lines and mana_llm_requests_total name the api', async () => {
    const chat = await post('/v1/chat/completions', { model: 'mana/fast-text', messages: USER }, { 'x-request-id': 'api-chat-1' });
    const msg = await messages({ model: 'mana/fast-text', max_tokens: 5, messages: USER }, { 'x-request-id': 'api-messages-1' });
    expect([chat.status, msg.status]).toEqual([200, 200]);
    await Promise.all([chat.text(), msg.text()]);
    const deadline = Date.now() + 8_000;
    let stored: Json[] = [];
    while (Date.now() < deadline) {
      const res = await fetch(`${gw.url}/admin/usage/requests?limit=100`, { headers: { authorization: `Bearer ${ADMIN}` } });
      stored = ((await res.json()) as Json).data;
      if (['api-chat-1', 'api-messages-1'].every((id) => stored.some((r) => r.request_id === id))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(stored.find((r) => r.request_id === 'api-chat-1')).toMatchObject({ api: 'chat_completions', alias: 'mana/fast-text', status: 200 });
    // The key is fingerprinted whichever header carried it.
    expect(stored.find((r) => r.request_id === 'api-messages-1')).toMatchObject({ api: 'messages', alias: 'mana/fast-text', status: 200, key: expect.stringMatching(/^k:[0-9a-f]{12}$/), prompt_tokens: 21 });
    const lines = gw.logs.filter((l) => l.msg === 'request');
    expect(lines.find((l) => l.req_id === 'api-messages-1')).toMatchObject({ api: 'messages', path: '/v1/messages', status: 200 });
    expect(lines.find((l) => l.req_id === 'api-chat-1')).toMatchObject({ api: 'chat_completions', path: '/v1/chat/completions' });
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/mana_llm_requests_total\{api="messages",alias="mana\/fast-text",target="cloud\/m1",status="200"\} \d+/);
    expect(metrics).toMatch(/mana_llm_requests_total\{api="chat_completions",alias="mana\/fast-text",target="cloud\/m1",status="200"\} \d+/);
    expect(metrics).toMatch(/mana_llm_time_to_first_byte_seconds_count\{api="messages",alias="mana\/tools",stream="true"\} \d+/);
  });
});
