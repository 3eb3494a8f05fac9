/**
 * The OTLP exporter, with its failures logged — at most once a minute, with
 * how many exports failed since the last line, so a dead collector costs one
 * warning a minute rather than one per batch. Requests never wait for an
 * export: the batch span processor calls this off their path, and what it
 * cannot send is counted as dropped (dropped-spans.ts).
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** Where the warning goes: the gateway's logger, or from the export thread a message to it. */
export interface WarningLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The least time between two export-failure log lines. */
export const EXPORT_FAILURE_LOG_INTERVAL_MS = 60_000; // 1 min

/** The most of an exporter's error message a log line quotes. */
const MAX_MESSAGE_CHARS = 200;

export class FailureLoggingExporter implements SpanExporter {
  private loggedAt = Number.NEGATIVE_INFINITY;
  private failures = 0;
  private lostSpans = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: WarningLog,
    private readonly now: () => number = Date.now,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) return done(result);
      const error = result.error ?? new Error('span export failed');
      this.failed(spans.length, error);
      // The processor counts a failure only when it carries an error (dropped-spans.ts).
      done({ code: result.code, error });
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  private failed(spans: number, error: Error): void {
    this.failures += 1;
    this.lostSpans += spans;
    const now = this.now();
    if (now - this.loggedAt < EXPORT_FAILURE_LOG_INTERVAL_MS) return;
    this.loggedAt = now;
    // The message only (a status text, a connection error): never the request's headers, which may hold a key.
    const code = (error as { code?: unknown }).code;
    this.logger.warn(
      {
        err: { name: error.name, message: error.message.slice(0, MAX_MESSAGE_CHARS), ...(typeof code === 'number' || typeof code === 'string' ? { code } : {}) },
        failed_exports: this.failures,
        spans_dropped: this.lostSpans,
      },
      'trace export failed: spans dropped (logged at most once a minute)',
    );
    this.failures = 0;
    this.lostSpans = 0;
  }
}
