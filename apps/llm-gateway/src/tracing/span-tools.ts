/**
 * What every request's spans are made with: the SDK's sampler (the decision
 * is the SDK's, made once per request), the official W3C trace-context
 * propagator (a client's `traceparent` in, ours upstream), the id source and
 * the export thread the finished spans go to.
 */
import { ROOT_CONTEXT, trace, TraceFlags, type Context, type SpanContext, type TextMapPropagator, defaultTextMapSetter } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import type { ExportThread } from './export-thread-client.js';
import type { TraceIds } from './trace-ids.js';

export interface SpanTools {
  readonly sampler: Sampler;
  readonly propagator: TextMapPropagator;
  readonly ids: TraceIds;
  readonly exports: ExportThread;
}

/** One span's place in its trace: what its children and the upstream `traceparent` carry. */
export interface SpanPlace {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  /** The trace's `tracestate` as the client sent it (the SDK's TraceState), or undefined. */
  readonly traceState: SpanContext['traceState'];
}

/** The `traceparent` (and `tracestate`) headers of a span, written by the W3C propagator. */
export function traceHeaders(tools: SpanTools, place: SpanPlace): Record<string, string> {
  const context: Context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: place.traceId,
    spanId: place.spanId,
    traceFlags: place.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    traceState: place.traceState,
  });
  const headers: Record<string, string> = {};
  tools.propagator.inject(context, headers, defaultTextMapSetter);
  return headers;
}
