/**
 * Structured JSON logging (pino). The destination is asynchronous and buffered:
 * lines are written in batches of ~4 KB, or every 100 ms when traffic is low,
 * so a slow stdout never blocks a request and the per-request cost stays at
 * building the line (an unbuffered write per line costs ~15 µs of event-loop
 * time, half the gateway's own overhead). `flush()` before exiting. One line per request, built by `requestLogLine`:
 * ids, alias, target, attempts and outcomes, status, durations, tokens —
 * never prompt text, never keys (the Authorization header is not read into logs).
 */
import { pino, type Logger } from 'pino';
import type { Attempt, Usage } from '@mana/llm-router';

export type { Logger };

export interface LoggerHandle {
  readonly logger: Logger;
  /** Writes buffered lines out; call before exiting. */
  flush(): void;
}

const LOG_BUFFER_BYTES = 4096; // 4 KB per write
const LOG_FLUSH_INTERVAL_MS = 100; // 100 ms: the longest a line waits in the buffer

export function createLogger(level: string, fd = 1): LoggerHandle {
  const destination = pino.destination({
    dest: fd,
    sync: false,
    minLength: LOG_BUFFER_BYTES,
    periodicFlush: LOG_FLUSH_INTERVAL_MS,
  });
  const logger = pino(
    {
      level,
      base: { service: 'mana-llm-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Belt and braces: these paths never hold secrets in our own lines, but if an object is ever logged whole…
      redact: { paths: ['headers.authorization', 'apiKey', 'api_key', 'authorization'], censor: '[redacted]' },
    },
    destination,
  );
  return {
    logger,
    flush() {
      try {
        destination.flushSync();
      } catch {
        // not ready yet (nothing written) or already closed: nothing to flush
      }
    },
  };
}

export interface AttemptLog {
  target: string;
  outcome: string;
  reason: string;
  status?: number;
  ms: number;
}

export function attemptLog(a: Attempt): AttemptLog {
  const out: AttemptLog = { target: a.target, outcome: a.outcome, reason: a.reason, ms: Math.round(a.durationMs * 10) / 10 };
  if (a.status !== undefined) out.status = a.status;
  return out;
}

export interface RequestLogFields {
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  ttfbMs?: number | undefined;
  alias?: string | undefined;
  model?: string | undefined;
  target?: string | undefined;
  stream?: boolean | undefined;
  priority?: string | undefined;
  attempts?: readonly Attempt[] | undefined;
  code?: string | undefined;
  usage?: Usage | undefined;
}

/** The one line logged per request. */
export function requestLogLine(f: RequestLogFields): Record<string, unknown> {
  const line: Record<string, unknown> = {
    req_id: f.requestId,
    method: f.method,
    path: f.path,
    status: f.status,
    duration_ms: Math.round(f.durationMs * 100) / 100,
  };
  if (f.ttfbMs !== undefined) line.ttfb_ms = Math.round(f.ttfbMs * 100) / 100;
  if (f.model !== undefined) line.model = f.model;
  if (f.alias !== undefined) line.alias = f.alias;
  if (f.target !== undefined) line.target = f.target;
  if (f.stream !== undefined) line.stream = f.stream;
  if (f.priority !== undefined) line.priority = f.priority;
  if (f.code !== undefined) line.code = f.code;
  if (f.attempts !== undefined) line.attempts = f.attempts.map(attemptLog);
  if (f.usage !== undefined) {
    line.tokens = { prompt: f.usage.prompt_tokens, completion: f.usage.completion_tokens, total: f.usage.total_tokens };
  }
  return line;
}
