/**
 * The export thread: the SDK's batch span processor (bounded queue; its
 * OTEL_BSP_* variables apply) in front of the official OTLP/HTTP exporter of
 * the configured protocol, fed with the spans the request thread recorded
 * (export-messages.ts). Serializing and sending spans never runs on the
 * thread that serves requests. Started by export-thread-client.ts.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { MeterProvider } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type BufferConfig, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { DroppedSpans } from './dropped-spans.js';
import { FailureLoggingExporter } from './export-failure-log.js';
import type { ExportThreadData, FromExportThread, ToExportThread } from './export-messages.js';
import { readableSpan, type SpanOrigin } from './readable-span.js';
import { TRACER_SCOPE } from './span-attributes.js';
import type { TracingConfig } from './tracing-config.js';

/** How often a change of the dropped count is told to the request thread (the metric is read at scrape time). */
const DROPPED_REPORT_MS = 250;

/**
 * This thread's CPU priority (nice 19, the lowest): exporting takes its turn after serving requests and never
 * competes with them for a core; on Linux it applies to this thread only. A machine too busy to export drops
 * spans (counted), as a slow collector does, rather than slowing requests.
 */
const EXPORT_NICE = 19;
try {
  setPriority(EXPORT_NICE);
} catch {
  // Not permitted here (some containers): the thread runs at the process's priority.
}

const port = parentPort!;
const { config, timeOrigin } = workerData as ExportThreadData;
const send = (message: FromExportThread): void => port.postMessage(message);

const exporter = new FailureLoggingExporter(await otlpExporter(config), { warn: (fields, message) => send({ type: 'warn', fields, message }) });
const dropped = new DroppedSpans();
// The processor's own loss reports (see dropped-spans.ts): its config type does not name the option, its constructor passes it on.
const buffer: BufferConfig & { selfObsMeterProvider: MeterProvider } = { selfObsMeterProvider: dropped };
const processor = new BatchSpanProcessor(exporter, buffer);
const origin: SpanOrigin = {
  resource: defaultResource().merge(resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName })),
  scope: { name: TRACER_SCOPE },
  timeOrigin: millisToHrTime(timeOrigin),
};

let reported = 0;
function reportDropped(): void {
  if (dropped.count === reported) return;
  reported = dropped.count;
  send({ type: 'dropped', total: reported });
}
setInterval(reportDropped, DROPPED_REPORT_MS).unref();

port.on('message', (message: ToExportThread) => {
  if (message.type === 'spans') {
    for (const record of message.spans) processor.onEnd(readableSpan(record, origin));
    send({ type: 'taken', spans: message.spans.length });
    return;
  }
  // Exports the queue, then stops the exporter.
  processor.shutdown().then(
    () => {
      reportDropped();
      send({ type: 'shut', ok: true });
    },
    () => {
      reportDropped();
      send({ type: 'shut', ok: false });
    },
  );
});
send({ type: 'ready' });

/** The exporter of the configured protocol; only that one's module is loaded. */
async function otlpExporter(tracing: TracingConfig): Promise<SpanExporter> {
  const options = { url: tracing.endpoint, headers: { ...tracing.headers } };
  if (tracing.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}
