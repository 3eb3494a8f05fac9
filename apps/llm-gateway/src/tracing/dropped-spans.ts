/**
 * Counts the spans the SDK's batch span processor loses: those it drops
 * because its bounded queue is full (a slow or dead collector) and those whose
 * export failed. The processor reports both through its own metrics
 * (`otel.sdk.processor.span.processed`, with `error.type` on a loss: its
 * self-observability, `selfObsMeterProvider`); this meter provider hears that
 * one counter and ignores every other instrument, so no OpenTelemetry metrics
 * SDK is needed. Read at scrape time as `mana_llm_trace_spans_dropped_total`.
 */
import { createNoopMeter, type Attributes, type Counter, type Meter, type MeterProvider, type MetricOptions } from '@opentelemetry/api';

/** The processor's counter of finished spans (semantic conventions, OTel SDK metrics). */
const PROCESSED_SPANS = 'otel.sdk.processor.span.processed';

export class DroppedSpans implements MeterProvider {
  /** Spans lost so far. */
  count = 0;

  getMeter(): Meter {
    const noop = createNoopMeter();
    const lost: Counter = {
      add: (value: number, attributes?: Attributes) => {
        // Exported spans carry no error.type; `queue_full` and an export error's name mean lost.
        if (attributes?.['error.type'] !== undefined) this.count += value;
      },
    };
    // Every other instrument is the no-op meter's.
    return Object.assign(Object.create(noop) as Meter, {
      createCounter: (name: string, options?: MetricOptions): Counter => (name === PROCESSED_SPANS ? lost : noop.createCounter(name, options)),
    });
  }
}
