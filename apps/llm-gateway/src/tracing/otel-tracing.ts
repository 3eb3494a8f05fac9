/**
 * Tracing switched on, with the official OpenTelemetry SDK split over two
 * threads. The request thread decides sampling with the SDK's sampler, reads
 * and writes trace context with the W3C propagator, and records each span as
 * plain data (request-span.ts, call-span.ts): a few property writes per span.
 * The export thread (export-thread.ts) runs the SDK's batch span processor and
 * the OTLP/HTTP exporter, so turning spans into SDK objects, serializing and
 * sending them never delays a request. Nothing is registered globally: no
 * context manager runs per request. Loaded only by start-tracing.ts, and only
 * when tracing is on.
 */
import type { IncomingMessage } from 'node:http';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../logging.js';
import { ExportThread } from './export-thread-client.js';
import { RequestSpan } from './request-span.js';
import type { SpanTools } from './span-tools.js';
import { TraceIds } from './trace-ids.js';
import type { TracingConfig } from './tracing-config.js';
import type { RequestTrace, TracedRoute, Tracing } from './tracing.js';

export async function createOtelTracing(config: TracingConfig, logger: Logger): Promise<Tracing> {
  const exports = await ExportThread.start(config, logger);
  return new OtelTracing({ sampler: samplerOf(config), propagator: new W3CTraceContextPropagator(), ids: new TraceIds(), exports });
}

class OtelTracing implements Tracing {
  constructor(private readonly tools: SpanTools) {}

  get droppedSpans(): number {
    return this.tools.exports.dropped;
  }

  requestStarted(req: IncomingMessage, route: TracedRoute, requestId: string, startedAt: number): RequestTrace {
    return new RequestSpan(this.tools, req, route, requestId, startedAt);
  }

  shutdown(timeoutMs: number): Promise<boolean> {
    // Exports the queue, then stops the exporter; a collector that does not answer in time loses the rest.
    return this.tools.exports.shutdown(timeoutMs);
  }
}

function samplerOf(config: TracingConfig): Sampler {
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config.ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.ratio) });
  }
}
