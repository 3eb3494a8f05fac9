/**
 * A recorded span (span-record.ts) as the SDK's ReadableSpan: what the batch
 * span processor queues and the OTLP exporter serializes. Only sampled spans
 * are recorded, so every one carries the sampled flag.
 */
import { TraceFlags, type Attributes, type HrTime, type SpanContext } from '@opentelemetry/api';
import { addHrTimes, millisToHrTime, TraceState, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import type { SpanRecord } from './span-record.js';

export interface SpanOrigin {
  readonly resource: Resource;
  readonly scope: InstrumentationScope;
  /** The recording thread's time origin (epoch ms). */
  readonly timeOrigin: HrTime;
}

export function readableSpan(record: SpanRecord, origin: SpanOrigin): ReadableSpan {
  const traceState = record.traceState === undefined ? undefined : new TraceState(record.traceState);
  const context: SpanContext = { traceId: record.traceId, spanId: record.spanId, traceFlags: TraceFlags.SAMPLED, traceState };
  const parent: SpanContext | undefined =
    record.parentSpanId === undefined
      ? undefined
      : { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: TraceFlags.SAMPLED, traceState, isRemote: record.parentIsRemote };
  const startTime = at(origin, record.startTime);
  const endTime = at(origin, Math.max(record.endTime, record.startTime));
  const events: TimedEvent[] = record.events.map((e) => ({ name: e.name, attributes: e.attributes, time: at(origin, e.time), droppedAttributesCount: 0 }));
  return {
    name: record.name,
    kind: record.kind,
    spanContext: () => context,
    parentSpanContext: parent,
    startTime,
    endTime,
    duration: millisToHrTime(Math.max(0, record.endTime - record.startTime)),
    status: record.statusMessage === undefined ? { code: record.statusCode } : { code: record.statusCode, message: record.statusMessage },
    attributes: defined(record.attributes),
    links: [],
    events,
    ended: true,
    resource: origin.resource,
    instrumentationScope: origin.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The attributes without empty values (as the SDK's own spans keep them), sorted out here rather than on the request thread. */
function defined(attributes: Attributes): Attributes {
  for (const key in attributes) {
    if (attributes[key] === undefined || attributes[key] === null) {
      const kept: Attributes = {};
      for (const [name, value] of Object.entries(attributes)) if (value !== undefined && value !== null) kept[name] = value;
      return kept;
    }
  }
  return attributes;
}

function at(origin: SpanOrigin, performanceMs: number): HrTime {
  return addHrTimes(origin.timeOrigin, millisToHrTime(performanceMs));
}
