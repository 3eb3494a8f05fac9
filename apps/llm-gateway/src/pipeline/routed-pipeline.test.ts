/**
 * The routed pipeline with a codec of another dialect than OpenAI's (a made-up
 * "shout" API, as Anthropic Messages or OpenAI Responses will be): every
 * answer, refusal and stream frame is the codec's, while X-Request-Id,
 * X-Mana-LLM-*, failover and the request's log line stay the pipeline's. A
 * real gateway context and a testkit upstream on loopback; the routes table
 * holds only the test API.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequestBody } from '@mana/llm-router';
import { refusingPort, startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { parseCli } from '../cli.js';
import { aliasesYaml } from '../e2e/harness.js';
import { startGateway, type Gateway } from '../gateway.js';
import type { GatewayError } from '../http/errors.js';
import { RouteTable } from '../http/route-table.js';
import { createGatewayServer } from '../server.js';
import { routed } from '../routes/gateway-routes.js';
import type { Decoded, InboundCodec, StreamEncoder } from '../dialects/codec.js';

const KEY = 'pipeline-test-key';

/** `{"type": "error", "error": {"kind": <code>, "text": <message>}}`: not OpenAI's shape, so a leak of it shows. */
const shoutError = (error: GatewayError): string => JSON.stringify({ type: 'error', error: { kind: error.code, text: error.message } });

/** Numbers its frames, so per-stream state is shown to work: one encoder per stream. */
class ShoutFrames implements StreamEncoder {
  private count = 0;
  event(chunk: string): string {
    this.count += 1;
    return `event: piece\ndata: ${chunk}\n\n`;
  }
  end(): string {
    return `event: over\ndata: {"pieces":${this.count}}\n\n`;
  }
  failed(error: GatewayError): string {
    return `event: broken\ndata: ${shoutError(error)}\n\n`;
  }
}

/** `{"to": <model>, "say": <text>, "stream"?: boolean}` → one user message. */
const SHOUT: InboundCodec = {
  path: '/v1/shout',
  api: 'messages',
  operation: 'chat',
  requestIdHeaders: ['shout-id'],
  decode(parsed: unknown): Decoded {
    const body = parsed as { to?: unknown; say?: unknown; stream?: unknown };
    if (typeof body?.say !== 'string') return { ok: false, error: { code: 'invalid_request', message: "'say' must be a string.", param: 'say' } };
    const model = typeof body.to === 'string' ? body.to : undefined;
    const stream = body.stream === true;
    const chat: ChatRequestBody = { messages: [{ role: 'user', content: body.say.toUpperCase() }], stream, ...(model === undefined ? {} : { model }) };
    return { ok: true, body: chat, model, stream };
  },
  encodeJson: (result) => JSON.stringify({ heard: (result.body.choices as { message: { content: string } }[])[0]!.message.content }),
  encodeUpstreamError: (result) => ({ contentType: 'application/json', body: JSON.stringify({ type: 'error', error: { kind: 'upstream', status: result.status } }) }),
  streamEncoder: () => new ShoutFrames(),
  encodeError: shoutError,
};

let cloud: FakeUpstream;
let gateway: Gateway;
let server: Server;
let url: string;
let dir: string;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  cloud = await startFakeOpenAI({ host: '127.0.0.1' });
  cloud.on('m1', { kind: 'answer', content: 'I hear you', chunks: 3 });
  cloud.on('cut', { kind: 'answer', content: 'one two three four', chunks: 4, cutAfterChunks: 1 });
  cloud.on('bad', { kind: 'status', status: 400, body: { error: { message: 'no', type: 'invalid_request_error', code: 'bad' } } });
  const dead = await refusingPort();
  dir = await mkdtemp(join(tmpdir(), 'mana-gw-pipeline-'));
  const configPath = join(dir, 'aliases.yaml');
  await writeFile(
    configPath,
    `providers:\n  dead: { type: openai, base_url: "http://127.0.0.1:${dead}/v1", api_key_required: false }\n` +
      `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
      aliasesYaml({ 'mana/cut': ['cloud/cut'], 'mana/bad': ['cloud/bad'] }, ['dead/m0', 'cloud/m1']),
  );
  const cli = parseCli(['--config', configPath, '--host', '127.0.0.1', '--port', '0', '--usage', 'off'], { MANA_LLM_API_KEYS: KEY });
  if (cli.kind !== 'run') throw new Error('unexpected CLI result');
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  gateway = await startGateway(cli.options, { logger, defaultMetrics: false });
  server = createGatewayServer(gateway.context, 30_000, new RouteTable([{ path: '/v1/shout', ...routed(SHOUT) }]));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/shout`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await gateway?.shutdown(1_000);
  await cloud?.close();
  await rm(dir, { recursive: true, force: true });
});

const shout = (body: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(10_000) });

describe('a routed API with its own codec', () => {
  it('answers in its dialect, with the shared headers, after the shared failover; the upstream got the decoded body', async () => {
    const res = await shout(JSON.stringify({ to: 'mana/fast-text', say: 'hello' }), { 'x-request-id': 'shout-1' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ heard: 'I hear you' });
    expect(res.headers.get('x-request-id')).toBe('shout-1');
    expect(res.headers.get('x-mana-llm-alias')).toBe('mana/fast-text');
    expect(res.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    expect(res.headers.get('x-mana-llm-attempts')).toBe('2');
    expect(cloud.requests.at(-1)?.body).toMatchObject({ model: 'm1', messages: [{ role: 'user', content: 'HELLO' }] });
    expect(lines.find((l) => l.msg === 'request' && l.req_id === 'shout-1')).toMatchObject({ path: '/v1/shout', status: 200, alias: 'mana/fast-text', target: 'cloud/m1' });
  });

  it.each([
    { step: 'the auth step', headers: { authorization: 'Bearer wrong' }, body: '{"say": "x"}', status: 401, code: 'invalid_api_key' },
    { step: 'the media type', headers: { 'content-type': 'text/plain' }, body: '{"say": "x"}', status: 415, code: 'unsupported_media_type' },
    { step: 'the priority header', headers: { 'x-mana-llm-priority': 'urgent' }, body: '{"say": "x"}', status: 400, code: 'invalid_header' },
    { step: 'the JSON reader', headers: {}, body: '{"say": ', status: 400, code: 'invalid_json' },
    { step: "the codec's decode", headers: {}, body: '{"say": 7}', status: 400, code: 'invalid_request' },
    { step: 'the router', headers: {}, body: '{"to": "mana/nope", "say": "x"}', status: 404, code: 'model_not_found' },
  ] as { step: string; headers: Record<string, string>; body: string; status: number; code: string }[])('refused by $step: $status $code in its dialect, with X-Request-Id', async ({ headers, body, status, code }) => {
    const res = await shout(body, headers);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await res.json()).toMatchObject({ type: 'error', error: { kind: code, text: expect.any(String) } });
  });

  it("an upstream's refusal of the request comes in its dialect, with its status", async () => {
    const res = await shout(JSON.stringify({ to: 'mana/bad', say: 'x' }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ type: 'error', error: { kind: 'upstream', status: 400 } });
  });

  it('a stream is framed by one encoder per stream, to its end or its failure after the commit', async () => {
    const whole = await shout(JSON.stringify({ to: 'mana/fast-text', say: 'x', stream: true }));
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(whole.headers.get('x-mana-llm-resolved')).toBe('cloud/m1');
    const frames = (await whole.text()).trim().split('\n\n');
    expect(frames.slice(0, -1).every((f) => f.startsWith('event: piece\ndata: {'))).toBe(true);
    expect(frames.at(-1)).toBe(`event: over\ndata: {"pieces":${frames.length - 1}}`);

    const cut = await (await shout(JSON.stringify({ to: 'mana/cut', say: 'x', stream: true }))).text();
    const last = cut.trim().split('\n\n').at(-1)!;
    expect(last.startsWith('event: broken\ndata: ')).toBe(true);
    expect(JSON.parse(last.slice('event: broken\ndata: '.length))).toMatchObject({ type: 'error', error: { kind: 'stream_interrupted' } });
  });
});
