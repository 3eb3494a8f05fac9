import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EXPORT_FAILURE_LOG_INTERVAL_MS, FailureLoggingExporter } from './export-failure-log.js';

/** An exporter whose every export ends as `result`. */
function exporterAnswering(result: ExportResult): SpanExporter {
  return { export: (_spans, done) => done(result), shutdown: () => Promise.resolve() };
}

function exportOnce(exporter: SpanExporter, spans: number): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(Array.from({ length: spans }, () => ({}) as ReadableSpan), resolve));
}

describe('export failures in the log', () => {
  it('one line a minute at most, saying how many exports and spans failed since the last one', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    let now = 1_000_000;
    const failing = new FailureLoggingExporter(exporterAnswering({ code: ExportResultCode.FAILED, error: new Error('connect ECONNREFUSED 127.0.0.1:4318') }), logger, () => now);

    await exportOnce(failing, 3);
    now += 30_000;
    await exportOnce(failing, 2);
    now += EXPORT_FAILURE_LOG_INTERVAL_MS - 30_001;
    await exportOnce(failing, 4);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, failed_exports: 1, spans_dropped: 3, err: { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:4318' } });

    now += 1; // a minute after the first line
    await exportOnce(failing, 1);
    expect(lines).toHaveLength(2);
    // The two exports the minute kept quiet, and this one.
    expect(lines[1]).toMatchObject({ failed_exports: 3, spans_dropped: 7 });
  });

  it('hands the processor an error with every failure (it counts a loss only with one), and logs nothing for a success', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const bare = await exportOnce(new FailureLoggingExporter(exporterAnswering({ code: ExportResultCode.FAILED }), logger), 1);
    expect(bare.code).toBe(ExportResultCode.FAILED);
    expect(bare.error).toBeInstanceOf(Error);
    lines.length = 0;
    const ok = await exportOnce(new FailureLoggingExporter(exporterAnswering({ code: ExportResultCode.SUCCESS }), logger), 5);
    expect(ok).toEqual({ code: ExportResultCode.SUCCESS });
    expect(lines).toEqual([]);
  });
});
