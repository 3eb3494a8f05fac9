/**
 * Reads an admin request's JSON body through the gateway's one JSON reader
 * (http/read-json-body.ts: UTF-8, nesting depth, JSON), with the admin limit:
 * at most ADMIN_MAX_BODY_BYTES (a config edit is small; a 10 MB body is
 * refused with 413 without being buffered). Refusals become AdminFailures.
 */
import type { IncomingMessage } from 'node:http';
import { readJsonBody as readJson } from '../http/read-json-body.js';
import { AdminFailure } from './admin-failure.js';

/** Largest admin request body: 1 MB. */
const ADMIN_MAX_BODY_BYTES = 1024 * 1024;

/** Marks a 413: the route answers with `Connection: close` and discards the rest (linger.ts). */
export class BodyTooLarge extends AdminFailure {}

/** The parsed body; throws an AdminFailure (`client_closed_request` when the client went away while sending it). */
export async function readJsonBody(req: IncomingMessage, limit = ADMIN_MAX_BODY_BYTES): Promise<unknown> {
  const body = await readJson(req, limit);
  switch (body.kind) {
    case 'json':
      return body.value;
    case 'too_large':
      throw new BodyTooLarge(body.error.code, body.error.message);
    case 'aborted':
      throw new AdminFailure('client_closed_request', 'The client closed the connection before sending the whole body.');
    case 'refused':
      throw new AdminFailure(body.error.code, body.error.message);
  }
}
