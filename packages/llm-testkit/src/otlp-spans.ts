/**
 * OTLP trace export requests (ExportTraceServiceRequest) as the official
 * OpenTelemetry exporters send them — protobuf (`http/protobuf`) or JSON
 * (`http/json`) — decoded into one plain shape, so a test reads real OTLP
 * whichever encoding a gateway was configured with.
 *
 * Protobuf: the wire format is read with @opentelemetry/otlp-transformer's own
 * reader; the field numbers are those of opentelemetry/proto trace.proto,
 * common.proto and resource.proto (as the transformer's serializer writes
 * them). Only what tests read is decoded; links and dropped counts are skipped.
 */
import { ProtobufReader } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/protobuf-reader.js';

/** An attribute value: OTLP's AnyValue (string, bool, int, double, array). Ints are assumed non-negative. */
export type SpanAttributeValue = string | number | boolean | readonly SpanAttributeValue[] | undefined;
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue>>;

/** OTLP's Span.SpanKind, by name. */
export type SpanKindName = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
const KINDS: readonly SpanKindName[] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

/** OTLP's Status.StatusCode, by name. */
export type SpanStatusName = 'unset' | 'ok' | 'error';
const STATUSES: readonly SpanStatusName[] = ['unset', 'ok', 'error'];

export interface ReceivedSpanEvent {
  readonly name: string;
  readonly timeUnixNano: bigint;
  readonly attributes: SpanAttributes;
}

/** One span as a collector received it, with the resource and scope it came under. */
export interface ReceivedSpan {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
  /** Undefined for a trace's root span. */
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: SpanKindName;
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: SpanAttributes;
  readonly events: readonly ReceivedSpanEvent[];
  readonly status: { readonly code: SpanStatusName; readonly message: string | undefined };
  readonly resource: SpanAttributes;
  readonly scope: string;
}

// ─── protobuf ──────────────────────────────────────────────────────────────

/** Wire types (protobuf encoding). */
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

/** The fields of one message, in order: field number, wire type and where its value starts. */
type Fields = (field: number, wire: number, reader: FieldReader) => void;

/** ProtobufReader, plus the fixed 64-bit values (timestamps, doubles) it does not read itself. */
class FieldReader {
  private readonly reader: ProtobufReader;

  constructor(private readonly bytes: Uint8Array) {
    this.reader = new ProtobufReader(bytes);
  }

  each(fields: Fields): void {
    while (!this.reader.isAtEnd()) {
      const { fieldNumber, wireType } = this.reader.readTag();
      const before = this.reader.pos;
      fields(fieldNumber, wireType, this);
      if (this.reader.pos === before) this.reader.skip(wireType); // a field nobody read
    }
  }

  varint(): number {
    return this.reader.readVarint();
  }

  string(): string {
    return this.reader.readString();
  }

  hex(): string {
    return Buffer.from(this.reader.readBytes()).toString('hex');
  }

  message(): FieldReader {
    return new FieldReader(this.reader.readBytes());
  }

  private fixed64(): DataView {
    const at = this.reader.pos;
    if (at + 8 > this.bytes.length) throw new Error('truncated fixed64 field');
    this.reader.pos += 8;
    return new DataView(this.bytes.buffer, this.bytes.byteOffset + at, 8);
  }

  uint64(): bigint {
    return this.fixed64().getBigUint64(0, true);
  }

  double(): number {
    return this.fixed64().getFloat64(0, true);
  }
}

/** An ExportTraceServiceRequest in protobuf: `resource_spans` = 1. */
export function decodeProtobufTraces(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  new FieldReader(body).each((field, wire, r) => {
    if (field === 1 && wire === LENGTH_DELIMITED) resourceSpans(r.message(), spans);
  });
  return spans;
}

/** ResourceSpans: resource = 1, scope_spans = 2. */
function resourceSpans(r: FieldReader, out: ReceivedSpan[]): void {
  let resource: SpanAttributes = {};
  const scopes: FieldReader[] = [];
  r.each((field, wire, m) => {
    if (wire !== LENGTH_DELIMITED) return;
    // Resource: attributes = 1.
    if (field === 1) resource = attributesOf(m.message(), 1);
    else if (field === 2) scopes.push(m.message());
  });
  for (const scope of scopes) scopeSpans(scope, resource, out);
}

/** ScopeSpans: scope = 1 (InstrumentationScope: name = 1), spans = 2. */
function scopeSpans(r: FieldReader, resource: SpanAttributes, out: ReceivedSpan[]): void {
  let scope = '';
  const spans: FieldReader[] = [];
  r.each((field, wire, m) => {
    if (wire !== LENGTH_DELIMITED) return;
    if (field === 1) {
      m.message().each((f, w, s) => {
        if (f === 1 && w === LENGTH_DELIMITED) scope = s.string();
      });
    } else if (field === 2) spans.push(m.message());
  });
  for (const span of spans) out.push(spanOf(span, resource, scope));
}

/**
 * Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6, start_time_unix_nano 7,
 * end_time_unix_nano 8, attributes 9, events 11, status 15 (message 2, code 3).
 */
function spanOf(r: FieldReader, resource: SpanAttributes, scope: string): ReceivedSpan {
  const span = {
    traceId: '',
    spanId: '',
    parentSpanId: undefined as string | undefined,
    name: '',
    kind: 'unspecified' as SpanKindName,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: {} as Record<string, SpanAttributeValue>,
    events: [] as ReceivedSpanEvent[],
    status: { code: 'unset' as SpanStatusName, message: undefined as string | undefined },
    resource,
    scope,
  };
  r.each((field, wire, m) => {
    if (field === 1 && wire === LENGTH_DELIMITED) span.traceId = m.hex();
    else if (field === 2 && wire === LENGTH_DELIMITED) span.spanId = m.hex();
    else if (field === 4 && wire === LENGTH_DELIMITED) span.parentSpanId = emptyToUndefined(m.hex());
    else if (field === 5 && wire === LENGTH_DELIMITED) span.name = m.string();
    else if (field === 6 && wire === VARINT) span.kind = KINDS[m.varint()] ?? 'unspecified';
    else if (field === 7 && wire === FIXED64) span.startTimeUnixNano = m.uint64();
    else if (field === 8 && wire === FIXED64) span.endTimeUnixNano = m.uint64();
    else if (field === 9 && wire === LENGTH_DELIMITED) addKeyValue(m.message(), span.attributes);
    else if (field === 11 && wire === LENGTH_DELIMITED) span.events.push(eventOf(m.message()));
    else if (field === 15 && wire === LENGTH_DELIMITED) {
      m.message().each((f, w, s) => {
        if (f === 2 && w === LENGTH_DELIMITED) span.status.message = s.string();
        else if (f === 3 && w === VARINT) span.status.code = STATUSES[s.varint()] ?? 'unset';
      });
    }
  });
  return span;
}

/** Span.Event: time_unix_nano 1, name 2, attributes 3. */
function eventOf(r: FieldReader): ReceivedSpanEvent {
  const event = { name: '', timeUnixNano: 0n, attributes: {} as Record<string, SpanAttributeValue> };
  r.each((field, wire, m) => {
    if (field === 1 && wire === FIXED64) event.timeUnixNano = m.uint64();
    else if (field === 2 && wire === LENGTH_DELIMITED) event.name = m.string();
    else if (field === 3 && wire === LENGTH_DELIMITED) addKeyValue(m.message(), event.attributes);
  });
  return event;
}

/** The repeated KeyValue field `field` of a message. */
function attributesOf(r: FieldReader, field: number): SpanAttributes {
  const attributes: Record<string, SpanAttributeValue> = {};
  r.each((f, wire, m) => {
    if (f === field && wire === LENGTH_DELIMITED) addKeyValue(m.message(), attributes);
  });
  return attributes;
}

/** KeyValue: key 1, value 2. */
function addKeyValue(r: FieldReader, into: Record<string, SpanAttributeValue>): void {
  let key = '';
  let value: SpanAttributeValue;
  r.each((field, wire, m) => {
    if (field === 1 && wire === LENGTH_DELIMITED) key = m.string();
    else if (field === 2 && wire === LENGTH_DELIMITED) value = anyValue(m.message());
  });
  into[key] = value;
}

/** AnyValue: string 1, bool 2, int 3, double 4, array 5 (ArrayValue: values 1). */
function anyValue(r: FieldReader): SpanAttributeValue {
  let value: SpanAttributeValue;
  r.each((field, wire, m) => {
    if (field === 1 && wire === LENGTH_DELIMITED) value = m.string();
    else if (field === 2 && wire === VARINT) value = m.varint() !== 0;
    else if (field === 3 && wire === VARINT) value = m.varint();
    else if (field === 4 && wire === FIXED64) value = m.double();
    else if (field === 5 && wire === LENGTH_DELIMITED) {
      const values: SpanAttributeValue[] = [];
      m.message().each((f, w, a) => {
        if (f === 1 && w === LENGTH_DELIMITED) values.push(anyValue(a.message()));
      });
      value = values;
    }
  });
  return value;
}

function emptyToUndefined(hex: string): string | undefined {
  return hex === '' ? undefined : hex;
}

// ─── JSON ──────────────────────────────────────────────────────────────────

type Json = Record<string, unknown>;

function list(value: unknown): Json[] {
  return Array.isArray(value) ? (value.filter((v) => typeof v === 'object' && v !== null) as Json[]) : [];
}

/** An ExportTraceServiceRequest in OTLP/JSON (hex ids, decimal-string times, enums as numbers). */
export function decodeJsonTraces(body: Uint8Array): ReceivedSpan[] {
  const request = JSON.parse(Buffer.from(body).toString('utf8')) as Json;
  const spans: ReceivedSpan[] = [];
  for (const rs of list(request.resourceSpans)) {
    const resource = jsonAttributes((rs.resource as Json | undefined)?.attributes);
    for (const ss of list(rs.scopeSpans)) {
      const scope = String((ss.scope as Json | undefined)?.name ?? '');
      for (const s of list(ss.spans)) {
        const status = (s.status ?? {}) as Json;
        spans.push({
          traceId: String(s.traceId ?? '').toLowerCase(),
          spanId: String(s.spanId ?? '').toLowerCase(),
          parentSpanId: typeof s.parentSpanId === 'string' && s.parentSpanId !== '' ? s.parentSpanId.toLowerCase() : undefined,
          name: String(s.name ?? ''),
          kind: KINDS[Number(s.kind ?? 0)] ?? 'unspecified',
          startTimeUnixNano: BigInt(String(s.startTimeUnixNano ?? 0)),
          endTimeUnixNano: BigInt(String(s.endTimeUnixNano ?? 0)),
          attributes: jsonAttributes(s.attributes),
          events: list(s.events).map((e) => ({
            name: String(e.name ?? ''),
            timeUnixNano: BigInt(String(e.timeUnixNano ?? 0)),
            attributes: jsonAttributes(e.attributes),
          })),
          status: { code: STATUSES[Number(status.code ?? 0)] ?? 'unset', message: typeof status.message === 'string' && status.message !== '' ? status.message : undefined },
          resource,
          scope,
        });
      }
    }
  }
  return spans;
}

function jsonAttributes(value: unknown): SpanAttributes {
  const attributes: Record<string, SpanAttributeValue> = {};
  for (const kv of list(value)) attributes[String(kv.key)] = jsonAnyValue(kv.value);
  return attributes;
}

function jsonAnyValue(value: unknown): SpanAttributeValue {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Json;
  if ('stringValue' in v) return String(v.stringValue);
  if ('boolValue' in v) return Boolean(v.boolValue);
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return Number(v.doubleValue);
  if ('arrayValue' in v) return list((v.arrayValue as Json | undefined)?.values).map(jsonAnyValue);
  return undefined;
}
