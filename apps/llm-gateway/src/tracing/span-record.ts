/**
 * A span as the request thread records it: plain data, no OpenTelemetry
 * object, so recording costs a few property writes and the record crosses to
 * the export thread (export-thread.ts) by structured clone. The export thread
 * turns it into the SDK's ReadableSpan for its batch span processor and OTLP
 * exporter (readable-span.ts). Times are the request thread's
 * `performance.now()` milliseconds; the export thread knows that thread's
 * time origin.
 */
import { SpanStatusCode, type Attributes, type SpanKind } from '@opentelemetry/api';
import { ATTR } from './span-attributes.js';

export interface SpanEventRecord {
  readonly name: string;
  readonly time: number;
  readonly attributes: Attributes;
}

export interface SpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  /** The parent's span id: the client's (remote) for a request span that continues its trace, the request span's for a call. */
  readonly parentSpanId: string | undefined;
  readonly parentIsRemote: boolean;
  /** The W3C `tracestate` the trace carries (the client's), serialized. */
  readonly traceState: string | undefined;
  readonly name: string;
  readonly kind: SpanKind;
  readonly startTime: number;
  endTime: number;
  readonly attributes: Attributes;
  readonly events: SpanEventRecord[];
  statusCode: SpanStatusCode;
  statusMessage: string | undefined;
}

/** What a span knows when it starts. */
export type SpanStart = Pick<SpanRecord, 'traceId' | 'spanId' | 'parentSpanId' | 'parentIsRemote' | 'traceState' | 'name' | 'kind' | 'startTime' | 'attributes'>;

/** A started span: not ended (its end time is its start until it ends), no events, status unset. One shape for every span. */
export function startSpanRecord(start: SpanStart): SpanRecord {
  return {
    traceId: start.traceId,
    spanId: start.spanId,
    parentSpanId: start.parentSpanId,
    parentIsRemote: start.parentIsRemote,
    traceState: start.traceState,
    name: start.name,
    kind: start.kind,
    startTime: start.startTime,
    endTime: start.startTime,
    attributes: start.attributes,
    events: [],
    statusCode: SpanStatusCode.UNSET,
    statusMessage: undefined,
  };
}

/** The span failed: `error.type` says how, its status is ERROR with `message`. */
export function markSpanFailed(record: SpanRecord, errorType: string, message: string | undefined): void {
  record.attributes[ATTR.errorType] = errorType;
  record.statusCode = SpanStatusCode.ERROR;
  record.statusMessage = message;
}
