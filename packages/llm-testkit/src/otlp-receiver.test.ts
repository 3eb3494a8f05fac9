import { SpanKind, SpanStatusCode, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

/**
 * The receiver against the official OpenTelemetry exporters, both encodings:
 * the spans a real SDK exports arrive as the test wrote them (names, ids,
 * parentage, kinds, every attribute type, events, status), and the faults it
 * is told to answer reach the exporter as export failures.
 */

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
});

afterAll(async () => {
  await receiver?.close();
});

/** A provider exporting each span as it ends, through `exporter`. */
function providerWith(exporter: SpanExporter): BasicTracerProvider {
  return new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
}

const ENCODINGS = [
  { encoding: 'protobuf', exporter: () => new ProtobufExporter({ url: `${receiver.url}/v1/traces`, headers: { 'x-collector-key': 'k1' } }) },
  { encoding: 'json', exporter: () => new JsonExporter({ url: `${receiver.url}/v1/traces`, headers: { 'x-collector-key': 'k1' } }) },
] as const;

describe.each(ENCODINGS)('OTLP/HTTP $encoding from the official exporter', ({ encoding, exporter }) => {
  it('arrives as sent: a server span, a client span under it, attributes of every type, an event, an error status', async () => {
    receiver.reset();
    const provider = providerWith(exporter());
    const tracer = provider.getTracer('otlp-receiver-test');
    const server = tracer.startSpan('POST /v1/chat/completions', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST' } });
    server.addEvent('mana.target.skipped', { 'mana.target': 'a/m1', 'mana.reason': 'unhealthy' });
    const client = tracer.startSpan(
      'chat m2',
      {
        kind: SpanKind.CLIENT,
        attributes: { 'server.port': 8080, 'gen_ai.request.temperature': 0.25, 'mana.failed_over': true, 'gen_ai.response.finish_reasons': ['stop', 'length'] },
      },
      trace.setSpan(ROOT_CONTEXT, server),
    );
    client.setStatus({ code: SpanStatusCode.ERROR, message: 'http_503' });
    client.end();
    server.end();
    const spans = await receiver.waitForSpans((s) => s.length === 2);
    await provider.shutdown();

    // Each span is its own export: they may arrive in either order.
    const c = spans.find((span) => span.kind === 'client');
    const s = spans.find((span) => span.kind === 'server');
    expect(receiver.exports.every((e) => e.encoding === encoding)).toBe(true);
    expect(receiver.exports[0]!.headers['x-collector-key']).toBe('k1');
    expect(s).toMatchObject({ name: 'POST /v1/chat/completions', kind: 'server', parentSpanId: undefined, attributes: { 'http.request.method': 'POST' }, scope: 'otlp-receiver-test' });
    expect(s!.traceId).toBe(server.spanContext().traceId);
    expect(s!.spanId).toBe(server.spanContext().spanId);
    expect(s!.events).toEqual([{ name: 'mana.target.skipped', timeUnixNano: expect.any(BigInt), attributes: { 'mana.target': 'a/m1', 'mana.reason': 'unhealthy' } }]);
    expect(c).toMatchObject({
      name: 'chat m2',
      kind: 'client',
      traceId: s!.traceId,
      parentSpanId: s!.spanId,
      attributes: { 'server.port': 8080, 'gen_ai.request.temperature': 0.25, 'mana.failed_over': true, 'gen_ai.response.finish_reasons': ['stop', 'length'] },
      status: { code: 'error', message: 'http_503' },
    });
    expect(c!.endTimeUnixNano).toBeGreaterThanOrEqual(c!.startTimeUnixNano);
    // Real wall-clock times: within a minute of now.
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    expect(nowNs - s!.startTimeUnixNano).toBeLessThan(60_000_000_000n);
    expect(s!.resource['service.name']).toEqual(expect.any(String));
  });

  it('answers as told: a 500 or a 413 fails the export', async () => {
    for (const status of [500, 413]) {
      receiver.reset();
      receiver.respond({ kind: 'status', status });
      const result = await new Promise<{ code: number; error?: Error }>((resolve) => {
        const tracer = new BasicTracerProvider().getTracer('t');
        const span = tracer.startSpan('refused');
        span.end();
        // The SDK's span object is also the ReadableSpan its processors hand an exporter.
        exporter().export([span as unknown as ReadableSpan], resolve);
      });
      expect(result.code).not.toBe(0);
      expect(receiver.exports).toHaveLength(1);
    }
    receiver.respond({ kind: 'accept' });
  });
});

describe('a receiver that does not record', () => {
  it('counts the spans it receives and keeps none (flat memory under load)', async () => {
    const counting = await startOtlpReceiver({ record: false });
    try {
      const provider = providerWith(new ProtobufExporter({ url: `${counting.url}/v1/traces` }));
      const tracer = provider.getTracer('t');
      for (let i = 0; i < 3; i++) tracer.startSpan(`span ${i}`).end();
      await provider.forceFlush();
      await provider.shutdown();
      expect(counting.spanCount()).toBe(3);
      expect(counting.spans).toEqual([]);
      expect(counting.exports).toEqual([]);
    } finally {
      await counting.close();
    }
  });
});
