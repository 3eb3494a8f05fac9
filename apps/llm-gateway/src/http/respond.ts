/**
 * Response writing helpers: one `writeHead` per response with every header in
 * one object, Content-Length on bodies, `Connection: close` while draining.
 */
import type { ServerResponse } from 'node:http';
import type { GatewayError } from './errors.js';

export type Headers = Record<string, string | number>;

export interface ResponseState {
  /** True once shutdown began: responses ask the client to close the connection. */
  draining: boolean;
}

export function sendText(
  res: ServerResponse,
  state: ResponseState,
  status: number,
  contentType: string,
  body: string,
  headers: Headers,
): void {
  if (res.headersSent || res.destroyed) return;
  headers['content-type'] = contentType;
  headers['content-length'] = Buffer.byteLength(body);
  if (state.draining) headers.connection = 'close';
  res.writeHead(status, headers);
  res.end(body);
}

/** An error with its status and Retry-After; its body as `encode` writes it (OpenAI's shape: errorBody). */
export function sendError(res: ServerResponse, state: ResponseState, error: GatewayError, headers: Headers, encode: (error: GatewayError) => string): void {
  const retryAfter = error.outcome?.retryAfterSeconds;
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  sendText(res, state, error.status, 'application/json', encode(error), headers);
}

/** A client that reads nothing of a stream for this long is disconnected. */
export const STALLED_CLIENT_TIMEOUT_MS = 60_000; // 60 s

/**
 * Resolves when `res` can take more data or is gone. Only called when a write
 * reported backpressure, so the timer costs nothing on the normal path; a client
 * that stops reading (but keeps the connection open) is cut after
 * `timeoutMs`, which also releases the upstream stream it was holding.
 */
export function drained(res: ServerResponse, timeoutMs = STALLED_CLIENT_TIMEOUT_MS): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(() => {
      res.destroy();
      done();
    }, timeoutMs);
    timer.unref();
    res.on('drain', done);
    res.on('close', done);
  });
}
