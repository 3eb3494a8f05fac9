/**
 * OpenTelemetry traces through the built gateway, switched on as a user does
 * (OTEL_EXPORTER_OTLP_ENDPOINT; OTEL_BSP_SCHEDULE_DELAY only shortens the
 * batch wait), exported by the official OTLP exporter to a real OTLP/HTTP
 * receiver on loopback that decodes the protobuf it sends. Clients are the
 * official SDKs; upstreams the testkit's fakes, which record the
 * `traceparent` each call carried.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, startOtlpReceiver, type FakeUpstream, type OtlpReceiver, type ReceivedSpan } from '@mana/llm-testkit';
import { aliasesYaml, spawnGateway, type GatewayProcess } from './harness.js';
import { ADMIN, storedRequest } from './usage-client.js';

let receiver: OtlpReceiver;
let cloud: FakeUpstream;
let gw: GatewayProcess;
let openai: OpenAI;

const MESSAGES = [{ role: 'user' as const, content: 'hi' }];
/** A chunk every 150 ms: a stream that lasts ~450 ms after its first chunk. */
const CHUNK_INTERVAL_MS = 150;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  cloud = await startFakeOpenAI();
  cloud.on('m1', { kind: 'status', status: 503 });
  cloud.on('m2', { kind: 'answer', content: 'from m2', usage: { prompt_tokens: 11, completion_tokens: 4 } });
  cloud.on('paced', { kind: 'answer', content: 'one two three four', chunks: 4, chunkIntervalMs: CHUNK_INTERVAL_MS, usage: { prompt_tokens: 6, completion_tokens: 8 } });
  const config =
    // A 503 puts nothing in cooldown: every request meets the failing target first.
    `settings:\n  probe_interval: 60s\n  failure_threshold: 1000\n  rate_limit_cooldown: 0s\n` +
    `providers:\n` +
    // A self-hosted server: its calls carry our trace context.
    `  cloud: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false }\n` +
    // The same server, told to receive none.
    `  private: { type: openai, base_url: "${cloud.baseUrl}", api_key_required: false, propagate_trace: false }\n` +
    // A provider without its key: skipped without a call.
    `  locked: { type: openai, base_url: "${cloud.baseUrl}", api_key: "\${TRACING_E2E_UNSET_KEY}" }\n` +
    aliasesYaml(
      {
        'mana/fast-text': ['cloud/m1', 'cloud/m2'],
        'mana/long-form': ['cloud/paced'],
        'mana/structured': ['locked/m2', 'cloud/m2'],
        'mana/reasoning': ['private/m2'],
        'mana/embed': ['cloud/vectors'],
      },
      ['cloud/m2'],
    );
  gw = await spawnGateway({
    config,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', MANA_LLM_ADMIN_KEY: ADMIN },
  });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'auth-off', maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([cloud?.close(), receiver?.close()]);
});

/** The SERVER span of the request with this X-Request-Id, and the CLIENT spans under it in start order, once exported. */
async function spansOf(requestId: string): Promise<{ server: ReceivedSpan; clients: ReceivedSpan[] }> {
  const isServer = (s: ReceivedSpan) => s.kind === 'server' && s.attributes['mana.request_id'] === requestId;
  const spans = await receiver.waitForSpans((all) => all.some(isServer));
  const server = spans.find(isServer)!;
  const clients = spans
    .filter((s) => s.kind === 'client' && s.traceId === server.traceId && s.parentSpanId === server.spanId)
    .sort((x, y) => (x.startTimeUnixNano < y.startTimeUnixNano ? -1 : 1));
  return { server, clients };
}

/** The `traceparent` each call of this trace carried upstream, in order. */
function upstreamTraceparents(traceId: string): string[] {
  return cloud.requests.map((r) => r.headers.traceparent).filter((h): h is string => typeof h === 'string' && h.includes(traceId));
}

const ms = (unixNano: bigint) => Number(unixNano / 1_000_000n);

describe('a traced chat completion', () => {
  it('whose first target fails and second answers: one SERVER span, two CLIENT spans with their attributes, the client\'s traceparent the parent', async () => {
    const clientTrace = '0af7651916cd43dd8448eb211c80319c';
    const { data, response } = await openai.chat.completions
      .create(
        { model: 'mana/fast-text', messages: MESSAGES, max_tokens: 64, temperature: 0.2 },
        { headers: { traceparent: `00-${clientTrace}-b7ad6b7169203331-01`, 'x-request-id': 'trace-failover-1' } },
      )
      .withResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-mana-llm-attempts')).toBe('2');

    const { server, clients } = await spansOf('trace-failover-1');
    expect(server).toMatchObject({
      name: 'POST /v1/chat/completions',
      traceId: clientTrace,
      parentSpanId: 'b7ad6b7169203331',
      status: { code: 'unset' },
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/chat/completions',
        'url.path': '/v1/chat/completions',
        'http.response.status_code': 200,
        'gen_ai.operation.name': 'chat',
        'mana.api': 'chat_completions',
        'mana.model': 'mana/fast-text',
        'mana.alias': 'mana/fast-text',
        'mana.resolved': 'cloud/m2',
        'mana.attempts': 2,
      },
    });
    expect(server.resource['service.name']).toBe('mana-llm-gateway');
    expect(clients.map((c) => c.name)).toEqual(['chat m1', 'chat m2']);
    const [failed, answered] = clients as [ReceivedSpan, ReceivedSpan];
    const both = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'cloud',
      'server.address': '127.0.0.1',
      'server.port': cloud.port,
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.temperature': 0.2,
    };
    expect(failed).toMatchObject({
      status: { code: 'error' },
      attributes: {
        ...both,
        'gen_ai.request.model': 'm1',
        'http.response.status_code': 503,
        'error.type': 'http_503',
        'mana.attempt.outcome': 'failed',
        'mana.attempt.reason': 'http_503',
        'mana.failed_over': true,
      },
    });
    expect(answered).toMatchObject({
      status: { code: 'unset' },
      attributes: {
        ...both,
        'gen_ai.request.model': 'm2',
        'gen_ai.response.model': 'm2',
        'gen_ai.response.id': data.id,
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': 11,
        'gen_ai.usage.output_tokens': 4,
        'http.response.status_code': 200,
        'mana.attempt.outcome': 'ok',
        'mana.failed_over': false,
      },
    });
    expect(answered.attributes['error.type']).toBeUndefined();
    // One after the other, both within the request.
    expect(failed.endTimeUnixNano).toBeLessThanOrEqual(answered.startTimeUnixNano);
    expect(server.startTimeUnixNano).toBeLessThanOrEqual(failed.startTimeUnixNano);
    expect(answered.endTimeUnixNano).toBeLessThanOrEqual(server.endTimeUnixNano);
    // Prompt and completion content is never recorded.
    expect(JSON.stringify([server, ...clients], (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toMatch(/from m2|"hi"/);

    // Each upstream call carried the context of its own attempt span.
    expect(upstreamTraceparents(clientTrace)).toEqual([`00-${clientTrace}-${failed.spanId}-01`, `00-${clientTrace}-${answered.spanId}-01`]);

    // The log line and the usage record lead to the trace.
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === 'trace-failover-1');
    expect(line.trace_id).toBe(clientTrace);
    expect((await storedRequest(gw, 'trace-failover-1')).trace_id).toBe(clientTrace);
  });

  it('without a traceparent starts a trace of its own, on the log line as on its spans', async () => {
    await openai.chat.completions.create({ model: 'mana/fast-text', messages: MESSAGES }, { headers: { 'x-request-id': 'trace-own-1' } });
    const { server, clients } = await spansOf('trace-own-1');
    expect(server.parentSpanId).toBeUndefined();
    expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(clients).toHaveLength(2);
    const line = await gw.waitForLog((l) => l.msg === 'request' && l.req_id === 'trace-own-1');
    expect(line.trace_id).toBe(server.traceId);
  });

  it('a malformed traceparent (wrong length, all-zero ids, 10 kB) is ignored: the request answers, a new trace starts', async () => {
    const zeros = `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01`;
    const malformed = ['00-4bf92f3577b34da6a3ce929d-00f067aa0ba902b7-01', zeros, `00-${'a'.repeat(10_000)}`];
    for (const [i, traceparent] of malformed.entries()) {
      const { response } = await openai.chat.completions
        .create({ model: 'mana/structured', messages: MESSAGES }, { headers: { traceparent, tracestate: 'vendor=1', 'x-request-id': `trace-malformed-${i}` } })
        .withResponse();
      expect(response.status).toBe(200);
      const { server, clients } = await spansOf(`trace-malformed-${i}`);
      expect(server.parentSpanId).toBeUndefined();
      expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(server.traceId).not.toBe('0'.repeat(32));
      expect(traceparent).not.toContain(server.traceId);
      // The new trace goes upstream, valid.
      expect(upstreamTraceparents(server.traceId)).toEqual([`00-${server.traceId}-${clients[0]!.spanId}-01`]);
    }
  });

  it('a client trace it did not sample (flags 00) is continued upstream, unsampled, and nothing of it is exported', async () => {
    const clientTrace = 'ab'.repeat(16);
    await openai.chat.completions.create(
      { model: 'mana/fast-text', messages: MESSAGES },
      { headers: { traceparent: `00-${clientTrace}-${'cd'.repeat(8)}-00`, tracestate: 'vendor=7', 'x-request-id': 'trace-unsampled-1' } },
    );
    // Both calls carry the client's trace with a span id of their own, unsampled, and its tracestate.
    const sent = upstreamTraceparents(clientTrace);
    expect(sent).toHaveLength(2);
    for (const traceparent of sent) expect(traceparent).toMatch(new RegExp(`^00-${clientTrace}-[0-9a-f]{16}-00$`));
    expect(new Set(sent).size).toBe(2);
    expect(cloud.requests.filter((r) => r.headers.traceparent === sent[0]).map((r) => r.headers.tracestate)).toEqual(['vendor=7']);
    // The log line still leads to the trace; a later sampled request's spans arrive, this one's never do.
    expect((await gw.waitForLog((l) => l.msg === 'request' && l.req_id === 'trace-unsampled-1')).trace_id).toBe(clientTrace);
    await openai.chat.completions.create({ model: 'mana/fast-text', messages: MESSAGES }, { headers: { 'x-request-id': 'trace-unsampled-after' } });
    await spansOf('trace-unsampled-after');
    expect(receiver.spans.filter((s) => s.traceId === clientTrace)).toEqual([]);
  });

  it('a target skipped without a call is an event on the request span, not a CLIENT span', async () => {
    await openai.chat.completions.create({ model: 'mana/structured', messages: MESSAGES }, { headers: { 'x-request-id': 'trace-skip-1' } });
    const { server, clients } = await spansOf('trace-skip-1');
    expect(server.events).toEqual([
      { name: 'mana.target.skipped', timeUnixNano: expect.any(BigInt), attributes: { 'mana.target': 'locked/m2', 'mana.reason': 'unconfigured: missing api key (TRACING_E2E_UNSET_KEY)' } },
    ]);
    expect(clients.map((c) => c.attributes['mana.target'])).toEqual(['cloud/m2']);
    expect(server.attributes['mana.attempts']).toBe(1);
  });

  it('a provider with propagate_trace: false gets no traceparent; its call is still a CLIENT span', async () => {
    const before = cloud.requests.length;
    await openai.chat.completions.create({ model: 'mana/reasoning', messages: MESSAGES }, { headers: { 'x-request-id': 'trace-private-1' } });
    const { clients } = await spansOf('trace-private-1');
    expect(clients.map((c) => [c.name, c.attributes['gen_ai.provider.name']])).toEqual([['chat m2', 'private']]);
    const sent = cloud.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.traceparent).toBeUndefined();
  });
});

describe('a traced stream', () => {
  it('ends its spans when the stream ends, not at its first chunk: the attempt span carries the time to the first chunk, finish reasons and usage', async () => {
    const stream = await openai.chat.completions.create(
      { model: 'mana/long-form', messages: MESSAGES, stream: true, stream_options: { include_usage: true } },
      { headers: { 'x-request-id': 'trace-stream-1' } },
    );
    let firstChunkAt: number | undefined;
    let text = '';
    for await (const chunk of stream) {
      firstChunkAt ??= Date.now();
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('one two three four');
    const { server, clients } = await spansOf('trace-stream-1');
    // Three more chunks came 150 ms apart after the first one.
    const paced = 2 * CHUNK_INTERVAL_MS;
    expect(ms(server.endTimeUnixNano)).toBeGreaterThanOrEqual(firstChunkAt! + paced);
    expect(clients).toHaveLength(1);
    const call = clients[0]!;
    expect(ms(call.endTimeUnixNano)).toBeGreaterThanOrEqual(firstChunkAt! + paced);
    expect(call.attributes).toMatchObject({
      'mana.stream.end': 'complete',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 6,
      'gen_ai.usage.output_tokens': 8,
      'gen_ai.response.model': 'paced',
    });
    const ttfc = call.attributes['gen_ai.response.time_to_first_chunk'] as number;
    expect(ttfc).toBeGreaterThan(0);
    // The first chunk came well before the stream's end.
    expect(ttfc * 1000).toBeLessThan(ms(call.endTimeUnixNano) - ms(call.startTimeUnixNano) - CHUNK_INTERVAL_MS);
  });
});

describe('the other inbound APIs, on the same pipeline', () => {
  it('/v1/messages (Anthropic SDK): a SERVER span POST /v1/messages with CLIENT spans of operation chat', async () => {
    const anthropic = new Anthropic({ baseURL: gw.url, apiKey: 'auth-off', maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'mana/fast-text', max_tokens: 50, messages: MESSAGES }, { headers: { 'x-request-id': 'trace-messages-1' } });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'from m2' });
    const { server, clients } = await spansOf('trace-messages-1');
    expect(server).toMatchObject({ name: 'POST /v1/messages', attributes: { 'http.route': '/v1/messages', 'mana.api': 'messages', 'gen_ai.operation.name': 'chat', 'mana.attempts': 2 } });
    expect(clients.map((c) => [c.name, c.attributes['gen_ai.operation.name'], c.attributes['mana.failed_over']])).toEqual([
      ['chat m1', 'chat', true],
      ['chat m2', 'chat', false],
    ]);
    expect(clients[1]!.attributes['gen_ai.request.max_tokens']).toBe(50);
  });

  it('/v1/embeddings (OpenAI SDK): operation embeddings', async () => {
    const result = await openai.embeddings.create({ model: 'mana/embed', input: 'a sentence' }, { headers: { 'x-request-id': 'trace-embed-1' } });
    expect(result.data).toHaveLength(1);
    const { server, clients } = await spansOf('trace-embed-1');
    expect(server).toMatchObject({ name: 'POST /v1/embeddings', attributes: { 'mana.api': 'embeddings', 'gen_ai.operation.name': 'embeddings', 'mana.alias': 'mana/embed' } });
    expect(clients.map((c) => c.name)).toEqual(['embeddings vectors']);
    expect(clients[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'vectors', 'gen_ai.response.model': 'vectors', 'mana.attempt.outcome': 'ok' });
  });
});
