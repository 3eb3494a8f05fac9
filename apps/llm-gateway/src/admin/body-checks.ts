/**
 * The checks every admin resource makes on a request body the same way: a
 * PATCH body is a JSON merge patch (an object), and a body that names its
 * resource names the one in the path. One function each, so the aliases,
 * providers and whatever comes next refuse alike.
 */
import { isPlainObject } from '../plain-object.js';
import { AdminFailure } from './admin-failure.js';

/** The PATCH body as a merge patch (RFC 7396); 400 invalid_request when it is not a JSON object. */
export function mergePatchOf(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) throw new AdminFailure('invalid_request', 'A PATCH body is a JSON merge patch: a JSON object.');
  return body;
}

/** 400 invalid_request when the body's `name` is given and is not the path's. */
export function checkBodyName(bodyName: unknown, pathName: string): void {
  if (bodyName !== undefined && bodyName !== pathName) {
    throw new AdminFailure('invalid_request', `The body names "${String(bodyName).slice(0, 100)}", the path "${pathName}".`, { param: 'name' });
  }
}
