/**
 * One routed request as a SERVER span: started when the request arrived
 * (the route table's clock), the child of the client's trace context when it
 * sent a valid one, ended when the request is over — for a stream, after its
 * last byte. Its upstream calls are CLIENT spans under it (call-span.ts);
 * targets skipped without a call are events on it. Recorded as plain data
 * (span-record.ts) and handed to the export thread when it ends.
 */
import type { IncomingMessage } from 'node:http';
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, trace, type Attributes, type Context } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import type { Attempt, CallObserver, RouterRequest, UpstreamCall } from '@mana/llm-router';
import { CallSpan, type RequestParameters } from './call-span.js';
import { ATTR, GEN_AI_OPERATION, TARGET_SKIPPED_EVENT } from './span-attributes.js';
import { markSpanFailed, startSpanRecord, type SpanRecord } from './span-record.js';
import type { SpanPlace, SpanTools } from './span-tools.js';
import type { FinishedRequest } from '../finished-request.js';
import type { RequestTrace, TracedRoute } from './tracing.js';

/** The longest `User-Agent` kept on a span (a client may send kilobytes). */
const MAX_USER_AGENT = 256;

export class RequestSpan implements RequestTrace {
  readonly traceId: string;
  /** This span as the parent of the attempts' spans. */
  private readonly place: SpanPlace;
  /** Undefined when the sampler did not sample the trace: nothing is recorded, the context still goes upstream. */
  private readonly record: SpanRecord | undefined;
  private readonly operation: string;
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
    const parentContext: Context = req.headers.traceparent === undefined ? ROOT_CONTEXT : tools.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const parent = trace.getSpanContext(parentContext);
    const method = req.method ?? 'POST';
    const name = `${method} ${route.path}`;
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
    this.traceId = parent?.traceId ?? tools.ids.traceId();
    const sampling = tools.sampler.shouldSample(parentContext, this.traceId, name, SpanKind.SERVER, attributes, []);
    const sampled = sampling.decision === SamplingDecision.RECORD_AND_SAMPLED;
    this.place = { traceId: this.traceId, spanId: tools.ids.spanId(), sampled, traceState: sampling.traceState ?? parent?.traceState };
    if (!sampled) return;
    if (sampling.attributes !== undefined) Object.assign(attributes, sampling.attributes);
    this.record = startSpanRecord({
      traceId: this.traceId,
      spanId: this.place.spanId,
      parentSpanId: parent?.spanId,
      parentIsRemote: parent?.isRemote === true,
      traceState: this.place.traceState?.serialize(),
      name,
      kind: SpanKind.SERVER,
      startTime: startedAt,
      attributes,
    });
  }

  decoded(body: RouterRequest['body'], stream: boolean): void {
    this.parameters = { stream, maxTokens: numberOf(body.max_tokens ?? body.max_completion_tokens), temperature: numberOf(body.temperature) };
  }

  callStarted(call: UpstreamCall): CallObserver {
    const span = new CallSpan(this.tools, this.place, this.operation, call, this.parameters, (ended) => this.open.delete(ended));
    this.open.add(span);
    return span;
  }

  skipped(attempt: Attempt): void {
    this.record?.events.push({ name: TARGET_SKIPPED_EVENT, time: performance.now(), attributes: { [ATTR.target]: attempt.target, [ATTR.reason]: attempt.reason } });
  }

  finished(end: FinishedRequest): void {
    for (const call of this.open) call.endWithRequest();
    const record = this.record;
    if (record === undefined) return;
    const o = end.outcome;
    const attributes = record.attributes;
    attributes[ATTR.httpStatus] = end.status;
    if (end.model !== undefined) attributes[ATTR.model] = end.model;
    if (o?.alias !== undefined) attributes[ATTR.alias] = o.alias;
    if (o?.target !== undefined) attributes[ATTR.resolved] = o.target;
    if (o !== undefined) attributes[ATTR.attempts] = o.upstreamCalls;
    // A server span is in error for its own failures (5xx), not a client's (4xx, 499).
    if (end.status >= 500) {
      markSpanFailed(record, end.code ?? String(end.status), end.code);
    }
    record.endTime = performance.now();
    this.tools.exports.add(record);
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
