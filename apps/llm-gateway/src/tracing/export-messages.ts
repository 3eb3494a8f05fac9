/**
 * What the request thread and the export thread (export-thread.ts) say to
 * each other, declared once for both ends (export-thread-client.ts is the
 * request thread's end). Everything crosses by structured clone.
 */
import type { SpanRecord } from './span-record.js';
import type { TracingConfig } from './tracing-config.js';

/** The export thread's start data. */
export interface ExportThreadData {
  readonly config: TracingConfig;
  /** The request thread's `performance.timeOrigin`: its span times are `performance.now()` of that thread. */
  readonly timeOrigin: number;
}

export type ToExportThread =
  /** Finished spans, for the batch span processor. */
  | { readonly type: 'spans'; readonly spans: readonly SpanRecord[] }
  /** Export what is queued, then stop. */
  | { readonly type: 'shutdown' };

export type FromExportThread =
  /** The exporter is loaded: spans may come. */
  | { readonly type: 'ready' }
  /** This many spans went into the processor's queue (or were dropped by it): no longer in flight between the threads. */
  | { readonly type: 'taken'; readonly spans: number }
  /** Spans the processor lost so far (its queue was full, or their export failed). */
  | { readonly type: 'dropped'; readonly total: number }
  /** A warning for the gateway's log (export failures, at most once a minute: export-failure-log.ts). */
  | { readonly type: 'warn'; readonly fields: Record<string, unknown>; readonly message: string }
  /** Shut down: whether everything queued was exported. */
  | { readonly type: 'shut'; readonly ok: boolean };
