/**
 * One upstream call as a CLIENT span `{gen_ai.operation.name} {gen_ai.request.model}`
 * under its request's SERVER span, fed by the router (CallObserver): started
 * when the call starts — its context is the `traceparent` the call carries
 * upstream — and ended at the call's end, which for a stream that the router
 * committed to is the end of the stream. Its attributes are set before it
 * ends, so an attempt that failed over says so (the router decides that when
 * it moves on: `published`); the end time is the call's own.
 *
 * A call is sampled as its request is: every sampler the gateway offers
 * decides a local child as its parent was decided (parent-based samplers by
 * the parent's flag, the others by the trace id they share).
 */
import { SpanKind, type Attributes } from '@opentelemetry/api';
import type { AnswerFacts, Attempt, CallObserver, StreamSummary, UpstreamCall, Usage } from '@mana/llm-router';
import { ATTR } from './span-attributes.js';
import { markSpanFailed, startSpanRecord, type SpanRecord } from './span-record.js';
import { traceHeaders, type SpanPlace, type SpanTools } from './span-tools.js';

/** What the decoded request says that its calls' spans carry. */
export interface RequestParameters {
  readonly stream: boolean;
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
}

export class CallSpan implements CallObserver {
  readonly headers: Readonly<Record<string, string>>;
  private readonly record: SpanRecord | undefined;
  private readonly startedAt = performance.now();
  private endedAt = 0;
  /** The router committed to this call's stream: the span lasts until the stream ends. */
  private committed = false;
  private closed = false;
  private attempt: Attempt | undefined;
  private answer: AnswerFacts | undefined;
  private failedOver: boolean | undefined;
  private summary: StreamSummary | undefined;

  constructor(
    private readonly tools: SpanTools,
    parent: SpanPlace,
    operation: string,
    call: UpstreamCall,
    private readonly parameters: RequestParameters,
    private readonly onClose: (span: CallSpan) => void,
  ) {
    const place: SpanPlace = { traceId: parent.traceId, spanId: tools.ids.spanId(), sampled: parent.sampled, traceState: parent.traceState };
    this.headers = traceHeaders(place);
    if (!place.sampled) return;
    const attributes: Attributes = {
      [ATTR.genAiOperation]: operation,
      [ATTR.genAiProvider]: call.provider,
      [ATTR.requestModel]: call.model,
      [ATTR.serverAddress]: call.serverAddress,
      [ATTR.serverPort]: call.serverPort,
      [ATTR.target]: call.target,
    };
    if (parameters.maxTokens !== undefined) attributes[ATTR.requestMaxTokens] = parameters.maxTokens;
    if (parameters.temperature !== undefined) attributes[ATTR.requestTemperature] = parameters.temperature;
    this.record = startSpanRecord({
      traceId: place.traceId,
      spanId: place.spanId,
      parentSpanId: parent.spanId,
      parentIsRemote: false,
      traceState: place.traceState?.serialize(),
      name: `${operation} ${call.model}`,
      kind: SpanKind.CLIENT,
      startTime: this.startedAt,
      attributes,
    });
  }

  ended(attempt: Attempt, answer: AnswerFacts | undefined): void {
    this.endedAt = performance.now();
    this.committed = attempt.outcome === 'ok' && this.parameters.stream;
    // Written into the span when it closes: for a committed stream that is after its last byte, not on the way to its first.
    this.attempt = attempt;
    this.answer = answer;
  }

  published(attempt: Attempt): void {
    this.failedOver = attempt.failedOver;
    if (!this.committed) this.close(this.endedAt);
  }

  streamEnded(summary: StreamSummary): void {
    this.summary = summary;
    this.close(performance.now());
  }

  /** The request ended while this span was open (a safety net: the router ends every call it starts). */
  endWithRequest(): void {
    this.close(this.endedAt > 0 ? this.endedAt : performance.now());
  }

  private close(at: number): void {
    if (this.closed) return;
    this.closed = true;
    const record = this.record;
    if (record !== undefined) {
      if (this.attempt !== undefined) this.writeAttempt(record, this.attempt, this.answer);
      if (this.failedOver !== undefined) record.attributes[ATTR.failedOver] = this.failedOver;
      if (this.summary !== undefined) writeStreamEnd(record, this.summary);
      record.endTime = at;
      this.tools.exports.add(record);
    }
    this.onClose(this);
  }

  private writeAttempt(record: SpanRecord, attempt: Attempt, answer: AnswerFacts | undefined): void {
    const attributes = record.attributes;
    attributes[ATTR.attemptOutcome] = attempt.outcome;
    attributes[ATTR.attemptReason] = attempt.reason;
    if (attempt.status !== undefined) attributes[ATTR.httpStatus] = attempt.status;
    // A call the router cancelled itself (a hedge's loser) did nothing wrong: no error status.
    if (attempt.outcome !== 'ok' && attempt.outcome !== 'cancelled') {
      markSpanFailed(record, attempt.reason, attempt.reason);
    }
    if (answer !== undefined) {
      const id = answer.id;
      const model = answer.model;
      if (id !== undefined) attributes[ATTR.responseId] = id;
      if (model !== undefined) attributes[ATTR.responseModel] = model;
      if (answer.finishReasons.length > 0) attributes[ATTR.finishReasons] = [...answer.finishReasons];
    }
    // A failed call's billed answer (`fail_over_on`) carries its usage on the attempt; an answer's is in its facts.
    addUsage(attributes, attempt.usage ?? answer?.usage);
    // The commit is the first content delta: the wait a streaming user notices.
    if (this.committed) attributes[ATTR.timeToFirstChunk] = (this.endedAt - this.startedAt) / 1000;
  }
}

/** How a committed stream ended: after the attempt's attributes, so its finish reasons and usage are the last word. */
function writeStreamEnd(record: SpanRecord, summary: StreamSummary): void {
  const attributes = record.attributes;
  attributes[ATTR.streamEnd] = summary.end;
  if (summary.finishReasons.length > 0) attributes[ATTR.finishReasons] = [...summary.finishReasons];
  addUsage(attributes, summary.usage);
  if (summary.end === 'interrupted') {
    markSpanFailed(record, summary.reason ?? 'stream_interrupted', 'stream interrupted');
  }
}

function addUsage(attributes: Attributes, usage: Usage | undefined): void {
  if (usage === undefined) return;
  attributes[ATTR.inputTokens] = usage.prompt_tokens;
  attributes[ATTR.outputTokens] = usage.completion_tokens;
}
