/**
 * What every request's spans are made with: the SDK's sampler (the decision
 * is the SDK's, made once per request), the official W3C trace-context
 * propagator (reading a client's `traceparent`), the id source and
 * the export thread the finished spans go to.
 */
import type { SpanContext, TextMapPropagator } from '@opentelemetry/api';
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

/**
 * The `traceparent` (and `tracestate`) headers of a span, in the W3C format
 * the propagator writes (version 00). Written here rather than through its
 * `inject`: that builds a context and re-validates ids this gateway made
 * itself, a few µs per call on the way upstream. Reading a client's headers,
 * which may be anything, stays the propagator's (request-span.ts).
 */
export function traceHeaders(place: SpanPlace): Record<string, string> {
  const traceparent = `00-${place.traceId}-${place.spanId}-${place.sampled ? '01' : '00'}`;
  const state = place.traceState?.serialize();
  return state === undefined || state === '' ? { traceparent } : { traceparent, tracestate: state };
}
