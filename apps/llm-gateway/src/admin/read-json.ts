/**
 * Reads an admin request's JSON body: at most ADMIN_MAX_BODY_BYTES (a config
 * edit is small; a 10 MB body is refused with 413 without being buffered),
 * valid UTF-8, valid JSON.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { BodyError, readBody } from '../http/read-body.js';
import { AdminFailure } from './admin-failure.js';

/** Largest admin request body: 1 MB. */
const ADMIN_MAX_BODY_BYTES = 1024 * 1024;

/** Marks a 413: the route answers with `Connection: close` and discards the rest (linger.ts). */
export class BodyTooLarge extends AdminFailure {}

/** The parsed body; `undefined` when the client went away while sending it. */
export async function readJsonBody(req: IncomingMessage, limit = ADMIN_MAX_BODY_BYTES): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await readBody(req, limit);
  } catch (error) {
    if (error instanceof BodyError && error.kind === 'too_large') throw new BodyTooLarge('request_too_large', `${error.message} Send a smaller request.`);
    throw new AdminFailure('client_closed_request', 'The client closed the connection before sending the whole body.');
  }
  if (!isUtf8(raw)) throw new AdminFailure('invalid_utf8', 'The request body is not valid UTF-8.');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AdminFailure('invalid_json', 'The request body is not valid JSON.');
  }
}
