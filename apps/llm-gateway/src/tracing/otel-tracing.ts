/**
 * Tracing switched on, with the official OpenTelemetry SDK: a tracer provider
 * with the configured sampler and resource, the SDK's batch span processor
 * (bounded queue, export off the request path; its OTEL_BSP_* variables
 * apply) in front of the OTLP/HTTP exporter of the configured protocol, and
 * the W3C trace-context propagator. Nothing is registered globally: the
 * gateway passes contexts itself, so no context manager runs per request.
 * Loaded only by start-tracing.ts, and only when tracing is on.
 */
import type { IncomingMessage } from 'node:http';
import type { MeterProvider } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type BufferConfig,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../logging.js';
import { DroppedSpans } from './dropped-spans.js';
import { FailureLoggingExporter } from './export-failure-log.js';
import { RequestSpan, type SpanTools } from './request-span.js';
import type { TracingConfig } from './tracing-config.js';
import type { RequestTrace, TracedRoute, Tracing } from './tracing.js';

/** The instrumentation scope of our spans. */
const SCOPE = '@mana/llm-gateway';

export async function createOtelTracing(config: TracingConfig, logger: Logger): Promise<Tracing> {
  const exporter = new FailureLoggingExporter(await otlpExporter(config), logger);
  const dropped = new DroppedSpans();
  // The processor's own loss reports (see dropped-spans.ts): its config type does not name the option, its constructor passes it on.
  const buffer: BufferConfig & { selfObsMeterProvider: MeterProvider } = { selfObsMeterProvider: dropped };
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName })),
    sampler: samplerOf(config),
    spanProcessors: [new BatchSpanProcessor(exporter, buffer)],
  });
  return new OtelTracing(provider, { tracer: provider.getTracer(SCOPE), propagator: new W3CTraceContextPropagator() }, dropped);
}

class OtelTracing implements Tracing {
  constructor(
    private readonly provider: BasicTracerProvider,
    private readonly tools: SpanTools,
    private readonly dropped: DroppedSpans,
  ) {}

  get droppedSpans(): number {
    return this.dropped.count;
  }

  requestStarted(req: IncomingMessage, route: TracedRoute, requestId: string, startedAt: number): RequestTrace {
    return new RequestSpan(this.tools, req, route, requestId, startedAt);
  }

  async shutdown(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, timeoutMs, false);
      timer.unref();
    });
    // Exports the queue, then stops the exporter; a collector that does not answer in time loses the rest.
    const sent = this.provider.shutdown().then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([sent, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The exporter of the configured protocol; only that one's module is loaded. */
async function otlpExporter(config: TracingConfig): Promise<SpanExporter> {
  const options = { url: config.endpoint, headers: { ...config.headers } };
  if (config.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
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
