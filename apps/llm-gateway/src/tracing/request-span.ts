/**
 * One routed request as a SERVER span: started when the request arrived
 * (the route table's clock), the child of the client's trace context when it
 * sent a valid one, ended when the request is over — for a stream, after its
 * last byte. Its upstream calls are CLIENT spans under it (call-span.ts);
 * targets skipped without a call are events on it.
 */
import type { IncomingMessage } from 'node:http';
import {
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { Attempt, CallObserver, RouterRequest, UpstreamCall } from '@mana/llm-router';
import { CallSpan, type RequestParameters } from './call-span.js';
import { ATTR, GEN_AI_OPERATION, TARGET_SKIPPED_EVENT } from './span-attributes.js';
import type { RequestTrace, TracedEnd, TracedRoute } from './tracing.js';

/** What every request's spans are made with. */
export interface SpanTools {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
}

/** The longest `User-Agent` kept on a span (a client may send kilobytes). */
const MAX_USER_AGENT = 256;

export class RequestSpan implements RequestTrace {
  readonly traceId: string;
  private readonly span: Span;
  /** This span as the parent of the attempts' spans. */
  private readonly context: Context;
  private readonly operation: string;
  private readonly recording: boolean;
  private parameters: RequestParameters = { stream: false, maxTokens: undefined, temperature: undefined };
  /** CLIENT spans not ended yet: a request that ends first ends them with it. */
  private readonly open = new Set<CallSpan>();

  constructor(
    private readonly tools: SpanTools,
    req: IncomingMessage,
    route: TracedRoute,
    requestId: string,
    startedAt: number,
  ) {
    // A malformed `traceparent` (wrong length, all-zero ids, kilobytes of it) extracts nothing: a new trace starts.
    const parent = tools.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const method = req.method ?? 'POST';
    this.operation = GEN_AI_OPERATION[route.operation];
    const attributes: Attributes = {
      [ATTR.httpMethod]: method,
      [ATTR.httpRoute]: route.path,
      [ATTR.urlPath]: pathOf(req.url),
      [ATTR.urlScheme]: 'http',
      [ATTR.genAiOperation]: this.operation,
      [ATTR.api]: route.api,
      [ATTR.requestId]: requestId,
    };
    const agent = req.headers['user-agent'];
    if (agent !== undefined) attributes[ATTR.userAgent] = agent.slice(0, MAX_USER_AGENT);
    this.span = tools.tracer.startSpan(`${method} ${route.path}`, { kind: SpanKind.SERVER, startTime: startedAt, attributes }, parent);
    this.recording = this.span.isRecording();
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
    this.traceId = this.span.spanContext().traceId;
  }

  decoded(body: RouterRequest['body'], stream: boolean): void {
    this.parameters = { stream, maxTokens: numberOf(body.max_tokens ?? body.max_completion_tokens), temperature: numberOf(body.temperature) };
  }

  callStarted(call: UpstreamCall): CallObserver {
    const span = new CallSpan(this.tools, this.context, this.operation, call, this.parameters, (ended) => this.open.delete(ended));
    this.open.add(span);
    return span;
  }

  skipped(attempt: Attempt): void {
    if (this.recording) this.span.addEvent(TARGET_SKIPPED_EVENT, { [ATTR.target]: attempt.target, [ATTR.reason]: attempt.reason });
  }

  finished(end: TracedEnd): void {
    for (const call of this.open) call.endWithRequest();
    if (this.recording) {
      const o = end.outcome;
      const attributes: Attributes = { [ATTR.httpStatus]: end.status };
      if (end.model !== undefined) attributes[ATTR.model] = end.model;
      if (o?.alias !== undefined) attributes[ATTR.alias] = o.alias;
      if (o?.target !== undefined) attributes[ATTR.resolved] = o.target;
      if (o !== undefined) attributes[ATTR.attempts] = o.upstreamCalls;
      // A server span is in error for its own failures (5xx), not a client's (4xx, 499).
      if (end.status >= 500) {
        attributes[ATTR.errorType] = end.code ?? String(end.status);
        this.span.setStatus({ code: SpanStatusCode.ERROR, message: end.code });
      }
      this.span.setAttributes(attributes);
    }
    // On the clock the span started on (the SDK's own end time is Date.now(), whole milliseconds).
    this.span.end(performance.now());
  }
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
