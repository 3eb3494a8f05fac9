/**
 * What the routed pipeline sees of tracing: types only, no OpenTelemetry
 * import, so the pipeline pays one `undefined` check per step when tracing is
 * off (`GatewayContext.tracing` is undefined then) and no OTel module is ever
 * loaded. The implementation is otel-tracing.ts, loaded by start-tracing.ts
 * only when the environment switches tracing on (tracing-config.ts).
 *
 * One request is one SERVER span (request-span.ts) and, under it, one CLIENT
 * span per upstream call (call-span.ts), fed by the router's attempt observer
 * (AttemptObserver in @mana/llm-router): every inbound API's codec gets them
 * through the shared pipeline, named by its `path`, `api` and `operation`.
 */
import type { IncomingMessage } from 'node:http';
import type { AttemptObserver, RouterRequest } from '@mana/llm-router';
import type { FinishedRequest } from '../finished-request.js';
import type { InboundCodec } from '../dialects/codec.js';

/** What names a request's spans: its route, inbound API and the operation asked of the router. */
export type TracedRoute = Pick<InboundCodec, 'path' | 'api' | 'operation'>;

export interface Tracing {
  /**
   * A routed request arrived at `startedAt` (`performance.now()`): its SERVER
   * span, the child of the client's `traceparent` when that is valid (else a
   * new trace, as the W3C specification says).
   */
  requestStarted(req: IncomingMessage, route: TracedRoute, requestId: string, startedAt: number): RequestTrace;
  /** Spans lost so far — the queue was full, or their export failed: `mana_llm_trace_spans_dropped_total`. */
  readonly droppedSpans: number;
  /** Exports what is queued (bounded by `timeoutMs`) and stops; false when that did not finish in time or an export failed. */
  shutdown(timeoutMs: number): Promise<boolean>;
}

/** One request's trace; the router is told of its attempts through it (`RouterRequest.observer`). */
export interface RequestTrace extends AttemptObserver {
  /** The trace's id (32 hex digits), on the log line and the usage record. */
  readonly traceId: string;
  /** The decoded request: the parameters its attempt spans carry (never its content) and whether it streams. */
  decoded(body: RouterRequest['body'], stream: boolean): void;
  /** The request is over (a stream's at its last byte): ends the SERVER span with its status, model and outcome. Called once. */
  finished(end: FinishedRequest): void;
}
