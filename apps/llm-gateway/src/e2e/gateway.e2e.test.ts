/**
 * End to end: the built gateway as a process, testkit upstreams, the official
 * `openai` SDK and plain HTTP. Auth off here (see auth.e2e.test.ts for auth on).
 */
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusingPort, startFakeOllama, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess, type Json } from './harness.js';

const SECRET = 'sk-e2e-SECRET-7f3a9c0d2b';
const ANSWER = 'The quick brown fox jumps';

let cloud: FakeUpstream;
let gpu: FakeUpstream;
let gw: GatewayProcess;
let client: OpenAI;
const bodies: string[] = []; // every response body seen, for the secret check

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

async function jsonOf(res: Response): Promise<Json> {
  const text = await res.text();
  bodies.push(text);
  return JSON.parse(text);
}

function findPromtool(): string | undefined {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return 'promtool';
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  cloud = await startFakeOpenAI();
  cloud.on('m2', { kind: 'answer', content: ANSWER, chunks: 3, headers: { 'x-ratelimit-remaining-requests': '42' } });
  // A proxy's HTML page in place of the upstream's JSON, and rate-limit headers the upstream marks hop-by-hop.
  cloud.on('proxy-page', {
    kind: 'status',
    status: 413,
    body: `<html><head><title>413 Request Entity Too Large</title></head><body><h1>Request Entity Too Large</h1>${'<p>nginx</p>'.repeat(200)}</body></html>`,
    headers: { 'content-type': 'text/html', connection: 'keep-alive, x-ratelimit-limit-requests', 'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '7' },
  });
  cloud.on('bad-request', {
    kind: 'status',
    status: 400,
    body: { error: { message: 'Upstream says: bad temperature', type: 'invalid_request_error', param: 'temperature', code: 'bad_temperature' } },
  });
  cloud.on('fail-a', { kind: 'status', status: 500 });
  cloud.on('fail-b', { kind: 'status', status: 503 });
  cloud.on('cut', { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 1 });
  cloud.on('hang', { kind: 'hang' });
  cloud.on('slow-stream', { kind: 'answer', content: 'a b c d e f g h i j', chunks: 10, chunkIntervalMs: 200 });
  gpu = await startFakeOllama();
  gpu.on('g1', { kind: 'answer', content: 'local answer here', chunks: 3, usage: { prompt_tokens: 7, completion_tokens: 3 } });
  const dead = await refusingPort();
  const config =
    `settings:\n  probe_interval: 60s\n  first_byte_timeout: 20s\n` +
    `providers:\n` +
    `  local: { type: ollama, base_url: "http://127.0.0.1:${dead}" }\n` +
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key: "${SECRET}" }\n` +
    `  nokey: { type: openai, base_url: "${cloud.baseUrl}", api_key: "\${E2E_MISSING_KEY}" }\n` +
    `  gpu: { type: ollama, base_url: "${gpu.url}" }\n` +
    // Refuses every connection, but never trips its breaker: each request sees the refusal itself.
    // In no alias, so nothing ever probes or calls it.
    `  spare: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
    `  gone: { type: openai, base_url: "http://127.0.0.1:${dead}/v1", api_key_required: false, settings: { failure_threshold: 1000 } }\n` +
    aliasesYaml(
      {
        'mana/fast-text': ['local/m1', 'cloud/m2'],
        'mana/structured': ['nokey/m3'],
        'mana/reasoning': ['cloud/fail-a', 'cloud/fail-b'],
        'mana/relay400': ['cloud/bad-request', 'cloud/m2'],
        'mana/proxy-page': ['cloud/proxy-page', 'cloud/m2'],
        'mana/cut': ['cloud/cut', 'cloud/m2'],
        'mana/hang': ['cloud/hang'],
        'mana/slow-stream': ['cloud/slow-stream'],
        'mana/local': ['gpu/g1', 'cloud/m2'],
        'mana/local-then-dead': ['gpu/g1', 'gone/m1'],
        'mana/local-only': ['gpu/g1'],
      },
      ['cloud/m2'],
    );
  gw = await spawnGateway({ config, args: ['--max-body', '64kb', '--request-timeout', '2s'] });
  client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'not-needed-auth-off', maxRetries: 0 });
});

afterAll(async () => {
  await gw?.stop();
  await cloud?.close();
  await gpu?.close();
});

describe('completions through the gateway', () => {
  it('fails over past a dead first target (openai SDK, non-streaming) and says which model answered', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'mana/fast-text', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe(ANSWER);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/m2');
    expect(response.headers.get('x-mana-llm-alias')).toBe('mana/fast-text');
    expect(response.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // Rate-limit headers of the relayed attempt are passed on.
    expect(response.headers.get('x-ratelimit-remaining-requests')).toBe('42');
    // The provider key was sent upstream, with the model rewritten.
    const upstream = cloud.requests.find((r) => r.model === 'm2');
    expect(upstream?.headers.authorization).toBe(`Bearer ${SECRET}`);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.target === 'cloud/m2');
    expect(line).toMatchObject({ alias: 'mana/fast-text', status: 200, stream: false });
    expect(line.attempts).toEqual([
      expect.objectContaining({ target: 'local/m1', outcome: 'failed', reason: 'connect_refused' }),
      expect.objectContaining({ target: 'cloud/m2', outcome: 'ok' }),
    ]);
    expect(line.tokens).toMatchObject({ prompt: expect.any(Number), completion: expect.any(Number) });
    expect(JSON.stringify(line)).not.toContain('hi"');
  });

  it('streams with the openai SDK, headers first', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'mana/long-form', messages: [{ role: 'user', content: 'tell me' }], stream: true })
      .withResponse();
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    expect(response.headers.get('x-mana-llm-resolved')).toBe('cloud/m2');
    expect(response.headers.get('x-mana-llm-alias')).toBe('mana/long-form');
    expect(response.headers.get('x-mana-llm-attempts')).toBe('1');
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe(ANSWER);
    expect(chunks).toBeGreaterThanOrEqual(3);
  });

  it('answers from a local Ollama in OpenAI format, streaming and not, with usage', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'mana/local', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(response.headers.get('x-mana-llm-resolved')).toBe('gpu/g1');
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]?.message.content).toBe('local answer here');
    expect(data.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 });
    expect(gpu.requests.at(-1)?.path).toBe('/api/chat');

    const stream = await client.chat.completions.create({
      model: 'mana/local',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('local answer here');
    expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.target === 'gpu/g1' && l.stream === true);
    expect(line.tokens).toMatchObject({ prompt: 7, completion: 3, total: 10 });
  });

  it('echoes a client X-Request-Id and accepts a direct provider/model', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'cloud/m2', messages: [{ role: 'user', content: 'x' }] }), {
      'x-request-id': 'req-abc-123',
    });
    const body = await jsonOf(res);
    expect(res.status).toBe(200);
    expect(body.object).toBe('chat.completion');
    expect(res.headers.get('x-request-id')).toBe('req-abc-123');
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m2');
    expect(res.headers.get('x-mana-llm-alias')).toBeNull();
  });

  it('maps X-Mana-LLM-Priority and rejects a bad value', async () => {
    const ok = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/vision', messages: [{ role: 'user', content: 'x' }] }), {
      'x-mana-llm-priority': 'background',
    });
    expect(ok.status).toBe(200);
    await ok.text();
    const bad = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/vision', messages: [{ role: 'user', content: 'x' }] }), {
      'x-mana-llm-priority': 'urgent',
    });
    expect(bad.status).toBe(400);
    expect((await jsonOf(bad)).error.code).toBe('invalid_header');
  });
});

describe('errors', () => {
  const user = [{ role: 'user', content: 'x' }];

  it.each([
    ['invalid JSON', 400, 'invalid_json', '{"messages": ['],
    ['a non-object body', 400, 'invalid_type', '[1,2]'],
    ['missing messages', 400, 'missing_messages', '{"model":"mana/fast-text"}'],
    ['empty messages', 400, 'missing_messages', '{"model":"mana/fast-text","messages":[]}'],
    ['messages not an array', 400, 'invalid_type', '{"messages":"hi"}'],
    ['a message without role', 400, 'invalid_request', '{"messages":[{"content":"hi"}]}'],
    ['stream not boolean', 400, 'invalid_type', JSON.stringify({ messages: user, stream: 'yes' })],
    ['model not a string', 400, 'invalid_type', JSON.stringify({ messages: user, model: 7 })],
    ['an empty body', 400, 'invalid_json', ''],
  ] as const)('%s → %i %s', async (_name, status, code, body) => {
    const res = await post('/v1/chat/completions', body);
    expect(res.status).toBe(status);
    const json = await jsonOf(res);
    expect(json.error).toMatchObject({ type: 'invalid_request_error', code });
    expect(typeof json.error.message).toBe('string');
    // A generated id (the client sent none) that finds this refusal's log line.
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === requestId);
    expect(line).toMatchObject({ status, code, path: '/v1/chat/completions' });
  });

  it('invalid UTF-8 anywhere in the body → 400 invalid_utf8, nothing sent upstream', async () => {
    const before = cloud.count('m2');
    const cases = [
      // inside message text: a lossy decode would forward U+FFFD and answer 200
      Buffer.concat([Buffer.from('{"model":"mana/fast-text","messages":[{"role":"user","content":"bad '), Buffer.from([0xed, 0xa0, 0x80, 0xff]), Buffer.from('"}]}')]),
      // inside the model name, and outside any string
      Buffer.concat([Buffer.from('{"model":"mana/fast-'), Buffer.from([0xc3, 0x28]), Buffer.from('","messages":[{"role":"user","content":"x"}]}')]),
      Buffer.concat([Buffer.from('{"messages":[{"role":"user","content":"x"}],'), Buffer.from([0xff, 0xfe]), Buffer.from('}')]),
    ];
    for (const body of cases) {
      const res = await post('/v1/chat/completions', body);
      expect(res.status).toBe(400);
      expect((await jsonOf(res)).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_utf8' });
    }
    // Valid multi-byte UTF-8 still goes through.
    const ok = await post('/v1/chat/completions', JSON.stringify({ model: 'cloud/m2', messages: [{ role: 'user', content: 'héllo ✓ 😀' }] }));
    expect(ok.status).toBe(200);
    await ok.text();
    expect(cloud.count('m2')).toBe(before + 1);
    expect(cloud.requests.at(-1)?.body).toMatchObject({ messages: [{ role: 'user', content: 'héllo ✓ 😀' }] });
  });

  it('unknown model → 404 model_not_found listing the aliases (SDK error too)', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'gpt-9000', messages: user }));
    expect(res.status).toBe(404);
    const json = await jsonOf(res);
    expect(json.error.code).toBe('model_not_found');
    expect(json.error.message).toContain('mana/fast-text');
    expect(json.error.message).toContain('mana/long-form');
    await expect(client.chat.completions.create({ model: 'gpt-9000', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
    });
  });

  it('a body over the limit → 413 request_too_large', async () => {
    const big = JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(100 * 1024) }] });
    const res = await post('/v1/chat/completions', big);
    expect(res.status).toBe(413);
    expect((await jsonOf(res)).error.code).toBe('request_too_large');
  });

  it('a chunked body over the limit → 413, reading stops', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"messages":[{"role":"user","content":"');
      req.write('y'.repeat(80 * 1024)); // never finished: the gateway must answer anyway
    });
    expect(status).toBe(413);
  });

  it('wrong content type → 415', async () => {
    const res = await post('/v1/chat/completions', 'messages=hi', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(res.status).toBe(415);
    expect((await jsonOf(res)).error.code).toBe('unsupported_media_type');
  });

  it('upstream 400 is relayed verbatim with its status, no failover', async () => {
    const before = cloud.count('m2');
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/relay400', messages: user, temperature: 9 }));
    expect(res.status).toBe(400);
    expect(await jsonOf(res)).toEqual({
      error: { message: 'Upstream says: bad temperature', type: 'invalid_request_error', param: 'temperature', code: 'bad_temperature' },
    });
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/bad-request');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('1');
    expect(cloud.count('m2')).toBe(before);
  });

  it('an upstream 4xx that is not JSON (a proxy page) is wrapped OpenAI-shaped, status kept; Connection-named headers are not relayed', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/proxy-page', messages: user }));
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/json');
    const json = await jsonOf(res);
    expect(json.error).toMatchObject({ type: 'invalid_request_error', code: 'upstream_error', param: null });
    expect(json.error.message).toContain('413 Request Entity Too Large');
    expect(json.error.message).not.toContain('<');
    expect(json.error.message.length).toBeLessThan(700);
    // The SDK can parse it as an API error.
    const error = await client.chat.completions.create({ model: 'mana/proxy-page', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_error');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('7');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBeNull();
  });

  it('nothing attempted → 503 no_healthy_provider with Retry-After and every target', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/structured', messages: user }));
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const json = await jsonOf(res);
    expect(json.error.code).toBe('no_healthy_provider');
    expect(json.error.attempts).toEqual([expect.objectContaining({ target: 'nokey/m3', outcome: 'skipped' })]);
    expect(json.error.attempts[0].reason).toMatch(/unconfigured/);
  });

  it('all attempts failed → 502 upstream_failed listing each', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/reasoning', messages: user }));
    expect(res.status).toBe(502);
    const json = await jsonOf(res);
    expect(json.error.code).toBe('upstream_failed');
    expect(json.error.attempts).toEqual([
      expect.objectContaining({ target: 'cloud/fail-a', outcome: 'failed', status: 500 }),
      expect.objectContaining({ target: 'cloud/fail-b', outcome: 'failed', status: 503 }),
    ]);
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/reasoning');
  });

  it('a target skipped before the network is no upstream call: X-Mana-LLM-Attempts counts only the refused one', async () => {
    // Ollama cannot fetch a remote image: gpu/g1 is skipped before any call, then gone/m1 refuses the connection.
    const image = [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://example.invalid/cat.png' } }] }];
    const before = gpu.count('g1');
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/local-then-dead', messages: image }));
    const json = await jsonOf(res);
    expect(res.status, JSON.stringify(json)).toBe(502);
    expect(json.error.attempts).toEqual([
      expect.objectContaining({ target: 'gpu/g1', outcome: 'skipped', reason: 'unsupported_request' }),
      expect.objectContaining({ target: 'gone/m1', outcome: 'failed' }),
    ]);
    expect(res.headers.get('x-mana-llm-attempts')).toBe('1');
    expect(gpu.count('g1')).toBe(before);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.alias === 'mana/local-then-dead');
    expect(line.attempts).toEqual([
      expect.objectContaining({ target: 'gpu/g1', outcome: 'skipped' }),
      expect.objectContaining({ target: 'gone/m1', outcome: 'failed' }),
    ]);
  });

  it('a parameter Ollama cannot honour skips its target before any call; with no other target → 400 unsupported_parameter', async () => {
    const before = gpu.count('g1');
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/local', messages: user, n: 2 }));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m2');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('1');
    const first = (l: Json): Json => (Array.isArray(l.attempts) ? l.attempts[0] : undefined);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.alias === 'mana/local' && first(l)?.reason === 'unsupported_parameter');
    expect(first(line)).toMatchObject({ target: 'gpu/g1', outcome: 'skipped' });

    const refused = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/local-only', messages: user, logprobs: true }));
    expect(refused.status).toBe(400);
    const json = await jsonOf(refused);
    expect(json.error).toMatchObject({ code: 'unsupported_parameter', type: 'invalid_request_error', param: 'logprobs' });
    expect(json.error.message).toContain('gpu/g1');
    expect(json.error.attempts).toEqual([expect.objectContaining({ target: 'gpu/g1', outcome: 'skipped', reason: 'unsupported_parameter' })]);
    expect(refused.headers.get('x-mana-llm-attempts')).toBe('0');
    expect(gpu.count('g1')).toBe(before);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/mana_llm_fallback_total\{from_model="gpu\/g1",to_model="cloud\/m2",reason="unsupported_parameter"\} 1/);
  });

  it('a stream failing after the first byte ends with an error event and no [DONE]', async () => {
    const res = await post('/v1/chat/completions', JSON.stringify({ model: 'mana/cut', messages: user, stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/cut');
    const text = await res.text();
    bodies.push(text);
    const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events[0]).toContain('"content":"one');
    const last = JSON.parse(events[events.length - 1]!.slice('data: '.length));
    expect(last.error).toMatchObject({ code: 'stream_interrupted', type: 'api_error' });
    // The error event carries the request's real attempts, as its head counted them.
    expect(last.error.attempts).toEqual([expect.objectContaining({ target: 'cloud/cut', outcome: 'ok' })]);
    expect(res.headers.get('x-mana-llm-attempts')).toBe('1');
    expect(text).not.toContain('[DONE]');
  });

  it('unknown routes and methods are 404/405, never 5xx', async () => {
    const a = await fetch(`${gw.url}/v2/nothing`);
    expect(a.status).toBe(404);
    expect((await jsonOf(a)).error.code).toBe('not_found');
    const b = await fetch(`${gw.url}/v1/chat/completions`);
    expect(b.status).toBe(405);
    await b.text();
  });
});

describe('client abort', () => {
  it('closing the client connection closes the upstream request', async () => {
    const controller = new AbortController();
    const fetchAbort = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/hang', messages: [{ role: 'user', content: 'y' }] }),
      signal: controller.signal,
    }).catch(() => 'aborted');
    await cloud.waitForRequest((r) => r.model === 'hang' && (r.body as Json)?.messages?.[0]?.content === 'y', 10_000);
    const abortedAt = Date.now();
    controller.abort();
    expect(await fetchAbort).toBe('aborted');
    const closed = await cloud.waitForClientClose(5_000);
    expect(closed.closedByClient).toBe(true);
    expect(closed.closedAt! - abortedAt).toBeLessThan(2_000);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.alias === 'mana/hang' && l.status === 499);
    expect(line.code).toBe('client_closed_request');
  });
});

describe('client abort mid-stream', () => {
  it('closing a stream after the first chunk closes the upstream stream', async () => {
    const controller = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mana/slow-stream', messages: [{ role: 'user', content: 'x' }], stream: true }),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read(); // the first chunk arrived
    controller.abort();
    const closed = await cloud.waitForClientClose(5_000);
    expect(closed.model).toBe('slow-stream');
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.alias === 'mana/slow-stream');
    expect(line.status).toBe(499);
  });
});

describe('bad input never gets a 5xx and never stops the server', () => {
  function raw(text: string, timeoutMs = 8_000): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(gw.port, '127.0.0.1');
      let out = '';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`no answer; got ${JSON.stringify(out)}`));
      }, timeoutMs);
      socket.on('data', (d) => (out += d.toString('latin1')));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(out);
      });
      socket.on('error', () => undefined);
      socket.write(text);
    });
  }
  const statusOf = (response: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);

  it('oversized headers → 431', async () => {
    const res = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`);
    expect(statusOf(res)).toBe(431);
    expect(res).toContain('"code":"headers_too_large"');
  });

  it('a garbage request line → 400', async () => {
    const res = await raw('HELLO\r\n\r\n');
    expect(statusOf(res)).toBe(400);
    expect(res).toContain('"code":"bad_request"');
  });

  it('a chunked body that never ends → 408 after the request timeout', async () => {
    const res = await raw(
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"mes\r\n',
    );
    expect(statusOf(res)).toBe(408);
    expect(res).toContain('"code":"request_timeout"');
  });

  it('odd bodies → 4xx', async () => {
    let deep = '"x"';
    for (let i = 0; i < 5_000; i++) deep = `[${deep}]`;
    const bodies: Array<string | Buffer> = [
      Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), // invalid UTF-8
      `{"messages":[{"role":"user","content":"x"}],"messages":"dup"}`, // duplicate keys: the last wins
      `{"messages":[{"role":"user","content":${deep}}]}`,
      `{"messages":[{"role":"user","content":"x"}],"model":"${'m'.repeat(20_000)}"}`,
      `{"messages":[{"role":"user","content":"x"}],"model":"mana/\u0000"}`,
      'null',
      '"string"',
      '{"messages":[null]}',
      '{"messages":[{"role":"user","content":{"a":1}}]}',
      '{"messages":[{"role":"user","content":"x"}],"n":"many"}',
    ];
    for (const body of bodies) {
      const res = await post('/v1/chat/completions', body);
      const text = await res.text();
      expect(res.status, `${String(body).slice(0, 60)} → ${text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
  });
});

describe('info endpoints', () => {
  it('GET /v1/models lists the aliases then the direct models', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    expect(ids.slice(0, 5)).toEqual(['mana/fast-text', 'mana/long-form', 'mana/structured', 'mana/reasoning', 'mana/vision']);
    expect(ids).toContain('cloud/m2');
  });

  it('GET /v1/aliases shows each target with its live state', async () => {
    const res = await fetch(`${gw.url}/v1/aliases`);
    const json = await jsonOf(res);
    const structured = json.data.find((a: Json) => a.alias === 'mana/structured');
    expect(structured).toMatchObject({ strategy: 'failover', description: expect.any(String) });
    expect(structured.chain[0]).toMatchObject({ target: 'nokey/m3', state: 'unconfigured' });
    expect(structured.chain[0].reason).toContain('E2E_MISSING_KEY');
  });

  it('GET /v1/health reports each provider with 200 even when some are down', async () => {
    const res = await fetch(`${gw.url}/v1/health`);
    expect(res.status).toBe(200);
    const json = await jsonOf(res);
    const byName = Object.fromEntries(json.providers.map((p: Json) => [p.provider, p]));
    expect(byName.cloud).toMatchObject({ configured: true, healthy: true });
    expect(byName.cloud.last_check).not.toBeNull();
    // Never checked: not known yet, rather than healthy.
    expect(byName.spare).toMatchObject({ configured: true, healthy: null, last_check: null });
    expect(byName.nokey).toMatchObject({ configured: false });
    expect(byName.local).toMatchObject({ configured: true });
    expect(byName.local.consecutive_failures).toBeGreaterThanOrEqual(1);
    expect(byName.local).toHaveProperty('last_error');
    expect(byName.local).toHaveProperty('unhealthy_until');
  });

  it('GET /healthz and /readyz answer 200', async () => {
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gw.url}/readyz`)).status).toBe(200);
  });

  it('/metrics counts the failover and passes promtool where installed', async () => {
    const res = await fetch(`${gw.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    bodies.push(text);
    expect(text).toMatch(/mana_llm_fallback_total\{from_model="local\/m1",to_model="cloud\/m2",reason="connect_refused"\} 1\n/);
    expect(text).toMatch(/mana_llm_alias_resolved_total\{alias="mana\/fast-text",target="cloud\/m2"\} 1\n/);
    expect(text).toMatch(/mana_llm_requests_total\{api="chat_completions",alias="mana\/fast-text",target="cloud\/m2",status="200"\} 1\n/);
    expect(text).toMatch(/mana_llm_requests_total\{api="chat_completions",alias="mana\/reasoning",target="none",status="502"\} 1\n/);
    expect(text).toMatch(/mana_llm_attempts_total\{target="local\/m1",outcome="failed"\} \d+\n/);
    expect(text).toMatch(/mana_llm_attempts_total\{target="cloud\/m2",outcome="ok"\} \d+\n/);
    expect(text).toMatch(/mana_llm_provider_healthy\{provider="cloud"\} 1\n/);
    expect(text).toMatch(/mana_llm_provider_healthy\{provider="nokey"\} 0\n/);
    expect(text).toMatch(/mana_llm_request_duration_seconds_bucket\{le="0.005",api="chat_completions",alias="mana\/fast-text",stream="false"\} \d+\n/);
    expect(text).toMatch(/mana_llm_time_to_first_byte_seconds_count\{api="chat_completions",alias="mana\/long-form",stream="true"\} 1\n/);
    expect(text).toContain('mana_llm_config_reload_total{result="success"} 0');
    const promtool = findPromtool();
    if (promtool !== undefined) {
      // promtool exits non-zero on any problem; lint warnings go to stdout.
      execFileSync(promtool, ['check', 'metrics'], { input: text });
    }
  });
});

describe('secrets', () => {
  it('never shows the provider key in responses, logs or metrics', () => {
    expect(bodies.length).toBeGreaterThan(10);
    for (const b of bodies) expect(b).not.toContain(SECRET);
    expect(gw.output()).not.toContain(SECRET);
    expect(gw.output()).not.toContain('not-needed-auth-off');
  });
});
