/**
 * POST /v1/responses on the routed pipeline, in process, against testkit
 * upstreams on loopback (the e2e suites drive the built gateway with the
 * official clients): failover with the first target dead, the chat request
 * the upstream receives, the answer and the event stream, a stream cut after
 * its first delta, a tool call's id through a round trip, `reasoning.effort`
 * on an Anthropic target, OpenAI-shaped errors that name the Responses field,
 * the stateless routes, and `api="responses"` on the log line and in metrics.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeAnthropic, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { parseCli } from '../../cli.js';
import { aliasesYaml, type Json } from '../../e2e/harness.js';
import { responsesEvents } from '../../e2e/sse-frames.js';
import { startGateway, type Gateway } from '../../gateway.js';
import { createGatewayServer } from '../../server.js';

const KEY = 'responses-test-key';
const ANTHROPIC_KEY = 'sk-ant-responses-0123456789';

let cloud: FakeUpstream;
let claude: FakeUpstream;
let gateway: Gateway;
let server: Server;
let base: string;
let dir: string;
const lines: Json[] = [];

beforeAll(async () => {
  [cloud, claude] = await Promise.all([startFakeOpenAI({ host: '127.0.0.1' }), startFakeAnthropic({ apiKey: ANTHROPIC_KEY })]);
  cloud.on('m1', { kind: 'answer', content: 'Hello there', chunks: 3, usage: { prompt_tokens: 12, completion_tokens: 2 } });
  cloud.on('cut', { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 1 });
  cloud.on('bad', { kind: 'status', status: 400, body: { error: { message: 'no such thing', type: 'invalid_request_error', code: 'bad_thing' } } });
  cloud.on('tools', { kind: 'answer', toolCalls: [{ id: 'call_up_1', function: { name: 'weather', arguments: { city: 'Oslo' } } }] });
  const dead = await refusingPort();
  dir = await mkdtemp(join(tmpdir(), 'mana-gw-responses-'));
  const configPath = join(dir, 'aliases.yaml');
  await writeFile(
    configPath,
    `providers:\n  dead: { type: openai, base_url: "http://127.0.0.1:${dead}/v1", api_key_required: false }\n` +
      `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
      `  anthropic: { base_url: "${claude.url}", api_key: "${ANTHROPIC_KEY}" }\n` +
      aliasesYaml(
        { 'mana/cut': ['cloud/cut'], 'mana/bad': ['cloud/bad'], 'mana/tools': ['cloud/tools'], 'mana/claude': ['anthropic/claude-sonnet-4-5'], 'mana/structured': ['cloud/m1'] },
        ['dead/m0', 'cloud/m1'],
      ).replace('  mana/structured:\n', '  mana/structured:\n    fail_over_on: [empty, invalid_json]\n'),
  );
  const cli = parseCli(['--config', configPath, '--host', '127.0.0.1', '--port', '0', '--usage', 'off', '--max-body', '256kb'], { MANA_LLM_API_KEYS: KEY });
  if (cli.kind !== 'run') throw new Error('unexpected CLI result');
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Json) });
  gateway = await startGateway(cli.options, { logger, defaultMetrics: false });
  server = createGatewayServer(gateway.context, 30_000);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await gateway?.shutdown(1_000);
  await Promise.all([cloud?.close(), claude?.close()]);
  await rm(dir, { recursive: true, force: true });
});

const call = (body: unknown, init: { method?: string; path?: string; headers?: Record<string, string> } = {}): Promise<Response> =>
  fetch(`${base}${init.path ?? '/v1/responses'}`, {
    method: init.method ?? 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...init.headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });

describe('POST /v1/responses', () => {
  it('answers a response object after failover, with the shared headers; the upstream got the chat request; the log line says api responses', async () => {
    const res = await call({ model: 'mana/fast-text', input: 'Hi', instructions: 'Be brief.', max_output_tokens: 50 }, { headers: { 'x-request-id': 'resp-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('resp-1');
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'mana/fast-text',
      instructions: 'Be brief.',
      max_output_tokens: 50,
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there' }] }],
      usage: { input_tokens: 12, output_tokens: 2, total_tokens: 14 },
    });
    expect(cloud.requests.at(-1)?.body).toEqual({
      model: 'm1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: false,
      max_completion_tokens: 50,
    });
    expect(lines.find((l) => l.msg === 'request' && l.req_id === 'resp-1')).toMatchObject({ path: '/v1/responses', api: 'responses', status: 200, alias: 'mana/fast-text', target: 'cloud/m1' });
  });

  it('streams the Responses events, no [DONE], ending with response.completed', async () => {
    const res = await call({ model: 'mana/fast-text', input: 'Hi', stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await res.text();
    expect(text).not.toContain('[DONE]');
    const all = responsesEvents(text);
    expect(all.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(all.map((e) => e.sequence_number)).toEqual(all.map((_, i) => i));
    const done = all.at(-1)!.response as Json;
    expect(done.output[0].content[0].text).toBe('Hello there');
    expect(all[0]!.response.id).toBe(done.id);
    // The stream asked the upstream for usage on the client's behalf: it is in the final object.
    expect(done.usage).toMatchObject({ input_tokens: 12, output_tokens: 2 });
  });

  it('a stream cut after its first delta ends with response.failed, never response.completed', async () => {
    const all = responsesEvents(await (await call({ model: 'mana/cut', input: 'Hi', stream: true })).text());
    expect(all.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'server_error' } } });
    expect(all.some((e) => e.type === 'response.completed')).toBe(false);
  });

  it("a tool call's id survives the round trip: the answer's call_id is the upstream's, and the output sent back answers it", async () => {
    const tools = [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
    const first = (await (await call({ model: 'mana/tools', input: 'Weather in Oslo?', tools })).json()) as Json;
    const fc = first.output.find((i: Json) => i.type === 'function_call');
    expect(fc).toMatchObject({ call_id: 'call_up_1', name: 'weather', arguments: '{"city":"Oslo"}' });
    const res = await call({
      model: 'mana/fast-text',
      tools,
      input: [{ role: 'user', content: 'Weather in Oslo?' }, fc, { type: 'function_call_output', call_id: fc.call_id, output: '12°C' }],
    });
    expect(res.status).toBe(200);
    expect((cloud.requests.at(-1)?.body as Json).messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_up_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_up_1', content: '12°C' },
    ]);
  });

  it('reasoning.effort on an anthropic target is no 400 and no skip: the target answers without it (the router tests show the attempt\'s note)', async () => {
    const res = await call({ model: 'mana/claude', input: 'Think.', reasoning: { effort: 'high' } }, { headers: { 'x-request-id': 'resp-claude' } });
    expect(res.status).toBe(200);
    expect(lines.find((l) => l.msg === 'request' && l.req_id === 'resp-claude')?.attempts).toMatchObject([{ target: 'anthropic/claude-sonnet-4-5', outcome: 'ok' }]);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('anthropic/claude-sonnet-4-5');
    expect(((await res.json()) as Json).reasoning).toEqual({ effort: 'high', summary: null });
    expect(claude.requests.at(-1)?.body).not.toHaveProperty('reasoning_effort');
  });

  it.each([
    ['bad input', 400, 'invalid_request', 'input[0].call_id', { model: 'mana/fast-text', input: [{ type: 'function_call_output', call_id: 'x', output: 'y' }] }],
    ['max_output_tokens: 0', 400, 'invalid_request', 'max_output_tokens', { model: 'mana/fast-text', input: 'x', max_output_tokens: 0 }],
    ['previous_response_id', 400, 'previous_response_not_supported', 'previous_response_id', { model: 'mana/fast-text', input: 'x', previous_response_id: 'resp_1' }],
    ['a built-in tool the client runs', 400, 'unsupported_tool', 'tools[0].type', { model: 'mana/fast-text', input: 'x', tools: [{ type: 'local_shell' }] }],
    ['a hosted tool no target runs', 400, 'unsupported_parameter', 'tools[0].type', { model: 'mana/fast-text', input: 'x', tools: [{ type: 'web_search' }] }],
    ['an unknown model', 404, 'model_not_found', 'model', { model: 'mana/nope', input: 'x' }],
    ['a schema that does not compile, on an alias that checks answers', 400, 'invalid_schema', 'text.format', { model: 'mana/structured', input: 'x', text: { format: { type: 'json_schema', name: 'n', schema: { type: 'nonsense' } } } }],
  ])('%s → %i %s naming %s, OpenAI-shaped', async (_case, status, code, param, body) => {
    const res = await call(body);
    expect(res.status).toBe(status);
    const error = ((await res.json()) as Json).error;
    expect(error).toMatchObject({ code, param, type: 'invalid_request_error' });
    expect(error.message).not.toContain('response_format');
  });

  it('the body guards are the pipeline\'s: not JSON → 400 invalid_json, a wrong key → 401, in OpenAI\'s shape', async () => {
    const notJson = await call('{"input": ');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as Json).error.code).toBe('invalid_json');
    const wrongKey = await call({ input: 'x' }, { headers: { authorization: 'Bearer wrong' } });
    expect(wrongKey.status).toBe(401);
    expect(((await wrongKey.json()) as Json).error.code).toBe('invalid_api_key');
  });

  it("the pipeline's memory bounds hold as on chat: input over --max-body → 413, nesting past 64 → 400, nothing sent upstream", async () => {
    const before = cloud.requests.length;
    const huge = await call({ model: 'mana/fast-text', input: 'x'.repeat(300 * 1024) });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as Json).error.code).toBe('request_too_large');
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = [deep];
    const nested = await call({ model: 'mana/fast-text', input: [{ role: 'user', content: [{ type: 'input_text', text: 'x', extra: deep }] }] });
    expect(nested.status).toBe(400);
    expect(((await nested.json()) as Json).error.code).toBe('invalid_request');
    expect(cloud.requests.length).toBe(before);
  });

  it("an upstream's refusal of the request is relayed with its status, as chat relays it", async () => {
    const res = await call({ model: 'mana/bad', input: 'x' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toMatchObject({ code: 'bad_thing', message: 'no such thing' });
  });

  it.each([
    ['GET', '/v1/responses/resp_123'],
    ['DELETE', '/v1/responses/resp_123'],
    ['GET', '/v1/responses/resp_123/input_items'],
    ['POST', '/v1/responses/resp_123/cancel'],
  ])('%s %s → 400 response_storage_not_supported, never a 404', async (method, path) => {
    const res = await call(method === 'POST' ? {} : undefined, { method, path });
    expect(res.status).toBe(400);
    const error = ((await res.json()) as Json).error;
    expect(error.code).toBe('response_storage_not_supported');
    expect(error.message).toContain('send the whole conversation as input');
  });

  it('the metrics count the requests under api="responses"', async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toMatch(/mana_llm_requests_total\{[^}]*api="responses"[^}]*\} [1-9]/);
  });
});
