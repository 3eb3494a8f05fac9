/**
 * The two halves of a request target (`/path?query`), split once here for
 * every route: the server dispatches on the path, routes read their filters
 * from the query.
 */
import type { IncomingMessage } from 'node:http';

/** The path of a request target, without its query string. */
export function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** The query parameters of a request (empty when it has none). */
export function paramsOf(req: IncomingMessage): URLSearchParams {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
}
