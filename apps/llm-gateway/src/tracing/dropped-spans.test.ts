import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, BatchSpanProcessor, type BufferConfig, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { MeterProvider } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { DroppedSpans } from './dropped-spans.js';

/**
 * DroppedSpans against the SDK's own batch span processor: it hears the
 * processor's reports of spans lost to a full queue and to failed exports,
 * and nothing for spans exported (the reports are the SDK's experimental
 * self-observability, so this pins what its pinned version does).
 */

const providers: BasicTracerProvider[] = [];

afterEach(async () => {
  await Promise.all(providers.splice(0).map((p) => p.shutdown().catch(() => undefined)));
});

function tracedWith(exporter: SpanExporter, buffer: BufferConfig): { dropped: DroppedSpans; endSpans(count: number): void; flush(): Promise<void> } {
  const dropped = new DroppedSpans();
  const options: BufferConfig & { selfObsMeterProvider: MeterProvider } = { ...buffer, selfObsMeterProvider: dropped };
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, options)] });
  providers.push(provider);
  const tracer = provider.getTracer('dropped-spans-test');
  return {
    dropped,
    endSpans: (count) => {
      for (let i = 0; i < count; i++) tracer.startSpan(`span ${i}`).end();
    },
    flush: () => provider.forceFlush(),
  };
}

const answering = (result: ExportResult, into: ReadableSpan[] = []): SpanExporter => ({
  export: (spans, done) => {
    into.push(...spans);
    done(result);
  },
  shutdown: () => Promise.resolve(),
});

describe('spans the batch processor loses', () => {
  it('counts none of the spans exported', async () => {
    const exported: ReadableSpan[] = [];
    const t = tracedWith(answering({ code: ExportResultCode.SUCCESS }, exported), { scheduledDelayMillis: 10 });
    t.endSpans(5);
    await t.flush();
    expect(exported).toHaveLength(5);
    expect(t.dropped.count).toBe(0);
  });

  it('counts those of a failed export', async () => {
    const t = tracedWith(answering({ code: ExportResultCode.FAILED, error: new Error('500') }), { scheduledDelayMillis: 10 });
    t.endSpans(3);
    await t.flush().catch(() => undefined);
    expect(t.dropped.count).toBe(3);
  });

  it('counts those turned away by a full queue while an export hangs', () => {
    const hanging: SpanExporter = { export: () => undefined, shutdown: () => Promise.resolve() };
    // A batch of 2 goes out at once and never comes back; the queue holds 4 more.
    const t = tracedWith(hanging, { maxQueueSize: 4, maxExportBatchSize: 2, scheduledDelayMillis: 60_000, exportTimeoutMillis: 100 });
    t.endSpans(10);
    expect(t.dropped.count).toBe(10 - 2 - 4);
  });
});
