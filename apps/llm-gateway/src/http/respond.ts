/**
 * Response writing helpers: one `writeHead` per response with every header in
 * one object, Content-Length on bodies, `Connection: close` while draining.
 */
import type { ServerResponse } from 'node:http';
import { errorBody, type GatewayError } from './errors.js';

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

export function sendJson(res: ServerResponse, state: ResponseState, status: number, value: unknown, headers: Headers): void {
  sendText(res, state, status, 'application/json', JSON.stringify(value), headers);
}

export function sendError(res: ServerResponse, state: ResponseState, error: GatewayError, headers: Headers): void {
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = error.retryAfterSeconds;
  sendText(res, state, error.status, 'application/json', errorBody(error), headers);
}

/** Resolves when `res` can take more data or is gone. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
