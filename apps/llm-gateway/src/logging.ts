/**
 * Structured JSON logging (pino). The destination is asynchronous and buffered:
 * lines are written in batches of ~4 KB, or every 100 ms when traffic is low,
 * so a slow stdout never blocks a request and the per-request cost stays at
 * building the line (an unbuffered write per line costs ~15 µs of event-loop
 * time, half the gateway's own overhead). `flush()` before exiting. One line per request, built by
 * `requestLogLine` from the request's finished record (finished-request.ts): ids (the trace's too, while
 * tracing is on), the calling key's name, alias, target, attempts and outcomes (attempt-view.ts), status,
 * durations, tokens — never prompt text, never keys (the Authorization header is not read into logs).
 * A request of no inbound API gets the line's head alone (`callLogLine`), at debug.
 */
import { pino, type Logger } from 'pino';
import { attemptLog } from './attempt-view.js';
import type { FinishedRequest, RequestHead } from './finished-request.js';

export type { Logger };

export interface LoggerHandle {
  readonly logger: Logger;
  /**
   * Writes buffered lines out; await it (bounded by `timeoutMs`) before exiting.
   * Asynchronous on purpose: sonic-boom's `flushSync` retries a broken pipe
   * (EPIPE, e.g. `| head`) forever, which would hang the process on exit.
   */
  flush(timeoutMs?: number): Promise<void>;
}

const LOG_BUFFER_BYTES = 4096; // 4 KB per write
const LOG_FLUSH_INTERVAL_MS = 100; // 100 ms: the longest a line waits in the buffer
const LOG_MAX_BUFFERED_BYTES = 16 * 1024 * 1024; // 16 MB: beyond this (stdout stalled) lines are dropped, memory stays bounded
const LOG_FLUSH_TIMEOUT_MS = 1_000; // 1 s: the longest an exit waits for logs

let cachedSecond = Number.NaN;
let cachedPrefix = '';

/**
 * pino's `isoTime`, the same text (`,"time":"2026-11-30T07:22:05.123Z"`) at a
 * fraction of the cost: `new Date().toISOString()` takes ~1 µs per line, so the
 * date up to the second is formatted once per second and only the
 * milliseconds are appended per line.
 */
export function isoTime(now: number = Date.now()): string {
  const second = Math.floor(now / 1000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = `,"time":"${new Date(second * 1000).toISOString().slice(0, 20)}`; // "…T07:22:05."
  }
  const ms = now - second * 1000;
  return `${cachedPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z"`;
}

export function createLogger(level: string, fd = 1): LoggerHandle {
  const destination = pino.destination({
    dest: fd,
    sync: false,
    minLength: LOG_BUFFER_BYTES,
    maxLength: LOG_MAX_BUFFERED_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
  });
  // stdout gone (closed pipe): logging stops, serving goes on.
  let broken = false;
  let flushedOnce = false;
  destination.on('error', () => {
    broken = true;
  });
  const logger = pino(
    {
      level,
      base: { service: 'mana-llm-gateway' },
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Belt and braces: these paths never hold secrets in our own lines, but if an object is ever logged whole…
      redact: { paths: ['headers.authorization', 'apiKey', 'api_key', 'authorization'], censor: '[redacted]' },
    },
    destination,
  );
  return {
    logger,
    flush(timeoutMs = LOG_FLUSH_TIMEOUT_MS) {
      return new Promise<void>((resolve) => {
        if (broken) return resolve();
        // After a first flush lines are written as they come: a later call only
        // waits briefly for a write in progress.
        if (flushedOnce) timeoutMs = Math.min(timeoutMs, 50);
        flushedOnce = true;
        const done = (): void => {
          clearTimeout(timer);
          destination.off('drain', done);
          destination.off('error', done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        destination.on('drain', done);
        destination.on('error', done);
        try {
          // Start writing what is buffered, then drop the batching threshold so
          // the writes go on until the buffer is empty ('drain'). Not flush(cb):
          // it also fsyncs, which can take seconds on a busy disk.
          destination.flush();
          (destination as unknown as { minLength: number }).minLength = 0;
        } catch {
          done(); // not open yet or already closed: nothing to flush
        }
      });
    },
  };
}

/** The head of every request's line; alone, the debug line of a request of no inbound API. */
export function callLogLine(h: RequestHead): Record<string, unknown> {
  return {
    req_id: h.requestId,
    method: h.method,
    path: h.path,
    status: h.status,
    duration_ms: Math.round(h.durationMs * 100) / 100,
  };
}

/** The one line logged per request of an inbound API; key order is the line's (tests and docs read it). */
export function requestLogLine(r: FinishedRequest): Record<string, unknown> {
  const o = r.outcome;
  const line = callLogLine(r);
  line.api = r.api;
  if (r.traceId !== undefined) line.trace_id = r.traceId;
  if (r.caller !== null) line.key = r.caller.name;
  if (r.ttfbMs !== undefined) line.ttfb_ms = Math.round(r.ttfbMs * 100) / 100;
  if (r.model !== undefined) line.model = r.model;
  // Before routing there is no outcome: the alias the body named stands in.
  const alias = o === undefined ? r.namedAlias : o.alias;
  if (alias !== undefined) line.alias = alias;
  if (o?.target !== undefined) line.target = o.target;
  line.stream = r.stream;
  if (r.priority !== undefined) line.priority = r.priority;
  if (r.code !== undefined) line.code = r.code;
  if (o !== undefined) {
    line.attempts = o.attempts.map(attemptLog);
    if (o.hedge !== undefined) line.hedge = o.hedge;
  }
  if (r.tokenUsage !== undefined) {
    line.tokens = { prompt: r.tokenUsage.prompt_tokens, completion: r.tokenUsage.completion_tokens, total: r.tokenUsage.total_tokens };
  }
  return line;
}
