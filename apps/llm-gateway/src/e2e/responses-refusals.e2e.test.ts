/**
 * What `/v1/responses` refuses, through the built gateway: the stateful parts
 * of OpenAI's Responses API (the gateway stores nothing), OpenAI's built-in
 * tools, and bad input. Each is an OpenAI-shaped 4xx with a stable `code`,
 * naming the field at fault, conforming to the spec's `ErrorResponse`, never
 * a 5xx, and nothing is sent upstream. The alias's first target is dead, as
 * in the other Responses suites.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { postInPieces } from './body-in-pieces.js';
import { aliasesYaml, deadThenCloud, spawnGateway, type GatewayProcess, type Json } from './harness.js';
import { expectConforms } from './responses-events.js';

const KEY = 'sk-mana-responses-refusals-e2e-19b0';

let cloud: FakeUpstream;
let gw: GatewayProcess;

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('m1', { kind: 'answer', content: 'Hello from m1' });
  const dead = await refusingPort();
  const config =
    deadThenCloud(dead, cloud.baseUrl) +
    aliasesYaml({}, ['dead/m0', 'cloud/m1']).replace('  mana/structured:\n', '  mana/structured:\n    fail_over_on: [invalid_json]\n');
  gw = await spawnGateway({ config, env: { MANA_LLM_API_KEYS: KEY } });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
});

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

/** The error of a refused request: its status, the spec's ErrorResponse, a request id; nothing sent upstream. */
async function refused(res: Response, status: number, before: number): Promise<Json> {
  const body = (await res.json()) as Json;
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  expectConforms('ErrorResponse', body, `the ${status}`);
  expect(body.error.code).toEqual(expect.any(String));
  expect(cloud.count()).toBe(before);
  return body.error;
}

const INPUT = 'Say hi';

describe('stateless, said plainly: what needs a stored response is a 400 saying to send the whole input', () => {
  it.each([
    { what: 'previous_response_id', body: { input: INPUT, previous_response_id: 'resp_abc123' }, code: 'previous_response_not_supported', param: 'previous_response_id' },
    { what: 'conversation (an id)', body: { input: INPUT, conversation: 'conv_abc123' }, code: 'conversation_not_supported', param: 'conversation' },
    { what: 'conversation (an object)', body: { input: INPUT, conversation: { id: 'conv_abc123' } }, code: 'conversation_not_supported', param: 'conversation' },
    { what: 'background mode', body: { input: INPUT, background: true }, code: 'background_not_supported', param: 'background' },
  ])('$what → 400 $code', async ({ body, code, param }) => {
    const before = cloud.count();
    const error = await refused(await call('POST', '/v1/responses', { model: 'mana/fast-text', ...body }), 400, before);
    expect(error).toMatchObject({ code, param, type: 'invalid_request_error' });
    expect(error.message).toMatch(/send the whole (conversation|input)/i);
  });

  it('an item_reference input item (a stored item by id) → 400 response_storage_not_supported', async () => {
    const before = cloud.count();
    const body = { model: 'mana/fast-text', input: [{ role: 'user', content: 'hi' }, { type: 'item_reference', id: 'msg_stored' }] };
    const error = await refused(await call('POST', '/v1/responses', body), 400, before);
    expect(error).toMatchObject({ code: 'response_storage_not_supported', param: expect.stringMatching(/^input\[1\]/), type: 'invalid_request_error' });
    expect(error.message).toMatch(/send the whole (conversation|input)/i);
  });

  it.each([
    ['GET', '/v1/responses/resp_abc123'],
    ['DELETE', '/v1/responses/resp_abc123'],
    ['GET', '/v1/responses/resp_abc123/input_items'],
    ['POST', '/v1/responses/resp_abc123/cancel'],
  ])('%s %s → 400: nothing is stored to read, delete or cancel', async (method, path) => {
    const before = cloud.count();
    const error = await refused(await call(method, path), 400, before);
    expect(error.code).toBe('response_storage_not_supported');
    expect(error.message).toMatch(/stores no responses/i);
  });

  it('store: true is accepted (and nothing is stored): the answer as usual, the same input answered the same way again', async () => {
    for (const store of [true, false]) {
      const res = await call('POST', '/v1/responses', { model: 'mana/fast-text', input: INPUT, store });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).output[0].content[0].text).toBe('Hello from m1');
    }
  });

  it.each(['computer_use', 'computer_use_preview', 'local_shell'])('a built-in tool the client runs (%s) → 400 unsupported_tool naming it', async (type) => {
    const before = cloud.count();
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }, { type }];
    const error = await refused(await call('POST', '/v1/responses', { model: 'mana/fast-text', input: INPUT, tools }), 400, before);
    expect(error).toMatchObject({ code: 'unsupported_tool', param: 'tools[1].type', type: 'invalid_request_error' });
    expect(error.message).toContain(type);
  });

  it.each(['web_search', 'web_search_preview', 'file_search', 'code_interpreter', 'mcp', 'image_generation'])(
    'a hosted tool (%s) no target of the alias runs → 400 unsupported_parameter naming it and the target, nothing sent',
    async (type) => {
      const before = cloud.count();
      const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }, { type }];
      const error = await refused(await call('POST', '/v1/responses', { model: 'mana/fast-text', input: INPUT, tools }), 400, before);
      expect(error).toMatchObject({ code: 'unsupported_parameter', param: 'tools[1].type', type: 'invalid_request_error' });
      expect(error.message).toContain(`the tool \`${type}\``);
      expect(error.message).toContain('hosted_tools: drop');
    },
  );
});

describe('bad input: an OpenAI-shaped 4xx naming the field, never a 5xx', () => {
  const message = (content: unknown) => ({ type: 'message', role: 'user', content });
  it.each([
    { what: 'input missing', body: {}, param: 'input', says: 'input' },
    { what: 'input a number', body: { input: 42 }, param: 'input', says: 'input' },
    { what: 'input an object', body: { input: { role: 'user', content: 'hi' } }, param: 'input', says: 'input' },
    { what: 'input an empty list', body: { input: [] }, param: 'input', says: 'input' },
    { what: 'an unknown item type', body: { input: [{ type: 'hologram', content: 'x' }] }, param: 'input[0].type', says: 'hologram' },
    { what: 'an unknown content type', body: { input: [message([{ type: 'input_hologram', text: 'x' }])] }, param: 'input[0].content[0].type', says: 'input_hologram' },
    { what: 'a file input', body: { input: [message([{ type: 'input_file', file_id: 'file-abc' }])] }, param: 'input[0].content[0].type', says: 'input_file' },
    { what: 'an unknown role', body: { input: [{ type: 'message', role: 'robot', content: 'x' }] }, param: 'input[0].role', says: 'robot' },
    { what: 'an image without a URL', body: { input: [message([{ type: 'input_image', detail: 'auto' }])] }, param: 'input[0].content[0].image_url', says: 'image_url' },
    { what: 'an image by uploaded file id', body: { input: [message([{ type: 'input_image', file_id: 'file-abc' }])] }, param: 'input[0].content[0].file_id', says: 'image_url' },
    {
      what: 'a function_call_output whose call_id matches no function_call',
      body: { input: [{ role: 'user', content: 'hi' }, { type: 'function_call_output', call_id: 'call_nowhere', output: '42' }] },
      param: 'input[1].call_id',
      says: 'call_nowhere',
    },
    {
      what: 'two function_call items with one call_id',
      body: {
        input: [
          { role: 'user', content: 'hi' },
          { type: 'function_call', call_id: 'call_same', name: 'f', arguments: '{}' },
          { type: 'function_call', call_id: 'call_same', name: 'g', arguments: '{}' },
        ],
      },
      param: 'input[2].call_id',
      says: 'call_same',
    },
    {
      what: 'two outputs for one call_id',
      body: {
        input: [
          { role: 'user', content: 'hi' },
          { type: 'function_call', call_id: 'call_once', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_once', output: '1' },
          { type: 'function_call_output', call_id: 'call_once', output: '2' },
        ],
      },
      param: 'input[3].call_id',
      says: 'call_once',
    },
    { what: 'max_output_tokens 0', body: { input: INPUT, max_output_tokens: 0 }, param: 'max_output_tokens', says: 'max_output_tokens' },
    { what: 'max_output_tokens not a number', body: { input: INPUT, max_output_tokens: 'many' }, param: 'max_output_tokens', says: 'max_output_tokens' },
    { what: 'a function tool without a name', body: { input: INPUT, tools: [{ type: 'function', parameters: { type: 'object' } }] }, param: 'tools[0].name', says: 'name' },
    { what: 'an unknown text.format type', body: { input: INPUT, text: { format: { type: 'yaml' } } }, param: 'text.format.type', says: 'text.format.type' },
    { what: 'a json_schema format whose schema is not an object', body: { input: INPUT, text: { format: { type: 'json_schema', name: 'x', schema: 42 } } }, param: 'text.format.schema', says: 'schema' },
  ])('$what → 400 naming $param', async ({ body, param, says }) => {
    const before = cloud.count();
    const error = await refused(await call('POST', '/v1/responses', { model: 'mana/fast-text', ...body }), 400, before);
    expect(error).toMatchObject({ type: 'invalid_request_error', param });
    expect(error.message).toContain(says);
  });

  it('a JSON schema that is invalid, on an alias that checks answers against it → 400 invalid_schema naming text.format', async () => {
    const before = cloud.count();
    for (const schema of [{ type: 'nonsense' }, { type: 'string', pattern: '^(?=a)a+$' }]) {
      const error = await refused(
        await call('POST', '/v1/responses', { model: 'mana/structured', input: INPUT, text: { format: { type: 'json_schema', name: 'x', schema } } }),
        400,
        before,
      );
      expect(error.code).toBe('invalid_schema');
      expect(error.param).toMatch(/^text\.format/);
    }
  });

  it('a body that is not JSON → 400 invalid_json; an unknown model → 404 model_not_found; no key → 401', async () => {
    const before = cloud.count();
    expect(await refused(await call('POST', '/v1/responses', '{"input": '), 400, before)).toMatchObject({ code: 'invalid_json' });
    expect(await refused(await call('POST', '/v1/responses', { model: 'mana/nope', input: INPUT }), 404, before)).toMatchObject({ code: 'model_not_found' });
    expect(await refused(await call('POST', '/v1/responses', { model: 'mana/embed', input: INPUT }), 400, before)).toMatchObject({ code: 'alias_kind_mismatch' });
    expect(await refused(await call('POST', '/v1/responses', { input: INPUT }, { authorization: '' }), 401, before)).toMatchObject({ code: 'missing_api_key' });
    expect(await refused(await call('POST', '/v1/responses', { input: INPUT }, { authorization: 'Bearer wrong' }), 401, before)).toMatchObject({ code: 'invalid_api_key' });
  });

  it('model missing: the default alias applies, as on chat', async () => {
    const res = await call('POST', '/v1/responses', { input: INPUT });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/fast-text');
    expect(((await res.json()) as Json).model).toBe('mana/fast-text');
  });

  it('100 MB of input: 413 request_too_large under the body limit chat has, the rest never read', async () => {
    const { status, body } = await postInPieces({
      url: `${gw.url}/v1/responses`,
      headers: { authorization: `Bearer ${KEY}` },
      head: '{"model": "mana/fast-text", "input": [',
      item: JSON.stringify({ type: 'message', role: 'user', content: 'z'.repeat(1024 * 1024 - 60) }),
      count: 100,
      tail: ']}',
    });
    expect(status).toBe(413);
    const json = JSON.parse(body);
    expectConforms('ErrorResponse', json, 'the 413');
    expect(json.error).toMatchObject({ code: 'request_too_large' });
  });
});
