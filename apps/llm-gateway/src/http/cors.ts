/**
 * CORS, opt-in (`--cors-origins` / MANA_LLM_CORS_ORIGINS; none by default, so
 * a gateway nobody configured answers browsers exactly as before).
 *
 * - A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`)
 *   from an allowed origin, on a path the route table serves, is answered 204
 *   here, before routing and auth (a browser never sends credentials on a
 *   preflight): the path's methods from the table, the request headers the
 *   browser asked for (SDKs send their own, e.g. the openai SDK's
 *   `x-stainless-*`), and a max age.
 * - Every other response to an allowed origin carries
 *   `Access-Control-Allow-Origin` (that origin) and
 *   `Access-Control-Expose-Headers`, so a browser client can read
 *   `X-Mana-LLM-*` and `X-Request-Id`.
 * - A disallowed origin gets no CORS header at all (its preflight falls
 *   through to routing: 405 on OPTIONS); only `Vary: Origin`, so a cache never
 *   serves one origin's answer to another.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long a browser may reuse a preflight answer: short enough that a changed origin list takes effect soon. */
export const CORS_MAX_AGE_SECONDS = 600; // 10 min (Chrome caps at 2 h)

/** The response headers a browser client may read. */
export const CORS_EXPOSED_HEADERS = [
  'X-Mana-LLM-Resolved',
  'X-Mana-LLM-Attempts',
  'X-Mana-LLM-Alias',
  'X-Mana-LLM-Dropped-Tools',
  'X-Request-Id',
  'Retry-After',
].join(', ');

/** A comma-separated list of header names (RFC 9110 tokens); anything else is not echoed. */
const HEADER_LIST = /^[!#$%&'*+.^`|~\w-]+(?:[ \t]*,[ \t]*[!#$%&'*+.^`|~\w-]+)*$/;
const MAX_REQUESTED_HEADERS_CHARS = 2_048; // 2 KB: far more than any client's header list

/**
 * `https://app.example.com` (scheme, host, optional port; nothing else) or `*`.
 * Returns the origin as browsers send it, or undefined when `text` is not one.
 */
export function normalizeOrigin(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '*') return '*';
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // Exactly an origin: no path, query, fragment or credentials.
  const bare = url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  if (!bare || /^[a-z]+:\/\/[^/]*\/./i.test(trimmed)) return undefined;
  return url.origin; // lowercase scheme and host, no default port: as a browser sends it
}

export class CorsPolicy {
  private readonly any: boolean;
  private readonly origins: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins);
  }

  allows(origin: string): boolean {
    return this.any || this.origins.has(origin);
  }

  /**
   * Answers a preflight and returns true; returns false when the request is not
   * one this policy answers (not a preflight, origin not allowed, or `methods`
   * undefined: a path the gateway does not serve), leaving it to routing.
   */
  preflight(req: IncomingMessage, res: ServerResponse, origin: string, methods: string | undefined): boolean {
    if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) return false;
    if (methods === undefined || !this.allows(origin)) return false;
    const headers: Record<string, string | number> = {
      'access-control-allow-origin': origin,
      'access-control-allow-methods': methods,
      'access-control-max-age': CORS_MAX_AGE_SECONDS,
      vary: 'Origin, Access-Control-Request-Headers',
      'content-length': 0,
    };
    const requested = req.headers['access-control-request-headers'];
    if (requested !== undefined && requested.length <= MAX_REQUESTED_HEADERS_CHARS && HEADER_LIST.test(requested.trim())) {
      headers['access-control-allow-headers'] = requested.trim();
    }
    res.writeHead(204, headers);
    res.end();
    return true;
  }

  /** Adds the CORS headers of an actual response (before the handler writes its head). */
  decorate(res: ServerResponse, origin: string): void {
    res.setHeader('vary', 'Origin');
    if (!this.allows(origin)) return;
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-expose-headers', CORS_EXPOSED_HEADERS);
  }
}
