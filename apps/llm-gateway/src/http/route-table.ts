/**
 * The gateway's routes as data: `{method, path, auth, handler}` declared in one
 * table (`routes/gateway-routes.ts`), matched here. Auth is a step the table
 * runs before the handler, never a check a handler must remember; the 405's
 * `Allow` comes from the table, so it cannot disagree with what is served.
 * (Hono's `app.on(method, path, ...)` + `app.use('/v1/*', auth)` is the model,
 * without a framework on the hot path.)
 *
 * Hot path: an exact path is one Map lookup plus one per method; params are a
 * shared frozen empty object for exact routes, so matching allocates nothing.
 */
import type { IncomingMessage } from 'node:http';
import { NO_PARAMS, type Call, type RouteParams } from '../call.js';
import type { GatewayContext } from '../context.js';
import { adminKeyError } from './admin-auth.js';
import type { ApiCaller } from './api-caller.js';
import { checkApiKey } from './auth.js';
import type { InboundRoute } from '../dialects/inbound-api.js';
import type { Dialect } from '../dialects/dialect.js';
import type { GatewayError } from './errors.js';

/**
 * `none`: open; `api_key`: MANA_LLM_API_KEYS when set; `admin`: MANA_LLM_ADMIN_KEY
 * (403 when unset); `master_key`: the admin key as LiteLLM's master key;
 * `api_key_or_admin`: either an API
 * key or the admin key (read-only views the dashboard, signed in with the
 * admin key, shows next to the admin API: health and the alias states).
 */
export type RouteAuth = 'none' | 'api_key' | 'admin' | 'master_key' | 'api_key_or_admin';

/** A route's handler: the call holds the request, its response, id, params and caller (call.ts). */
export type RouteHandler = (call: Call) => void | Promise<void>;

export interface Route {
  /** One method or several (e.g. GET and HEAD for probes). */
  readonly method: string | readonly string[];
  /**
   * An exact path (`/v1/models`), or a prefix ending in one `:param` that takes
   * the rest of the path, slashes included (`/v1/models/:id` matches
   * `/v1/models/groq/llama-3`: model ids contain slashes).
   */
  readonly path: string;
  readonly auth: RouteAuth;
  readonly handler: RouteHandler;
  /**
   * Set on a route of an inbound API (chat completions, messages, count_tokens, …):
   * every request it receives, refusals of the auth step included, is answered
   * in its dialect and counted, recorded and logged as one of that API's.
   */
  readonly inbound?: InboundRoute;
  /** The shape of this route's errors (auth refusals included) when it is not OpenAI's: LiteLLM's, the Responses API's. */
  readonly dialect?: Dialect;
}

/** The routes of one path, by method. */
interface PathRoutes {
  readonly byMethod: Map<string, Route>;
  /** The 405's Allow header value: the methods of this path, in declaration order. */
  allow: string;
}

interface ParamPath {
  readonly prefix: string;
  readonly param: string;
  readonly routes: PathRoutes;
}

export type RouteMatch =
  | { readonly kind: 'route'; readonly route: Route; readonly params: RouteParams }
  | { readonly kind: 'method_not_allowed'; readonly allow: string }
  | { readonly kind: 'not_found' };

const NOT_FOUND: RouteMatch = Object.freeze({ kind: 'not_found' });

function decodeParam(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text; // a malformed escape is taken literally: the handler answers 404 for an unknown id
  }
}

export class RouteTable {
  private readonly exact = new Map<string, PathRoutes>();
  /** Longest prefix first, so `/v1/models/x/:y` would win over `/v1/models/:id`. */
  private readonly params: ParamPath[] = [];
  /** Per path: the match for a method the path does not serve (built once, reused). */
  private readonly notAllowed = new Map<PathRoutes, RouteMatch>();
  /** Per exact route: its match (built once, reused). */
  private readonly exactMatches = new Map<Route, RouteMatch>();

  constructor(routes: readonly Route[]) {
    for (const route of routes) this.add(route);
  }

  private pathRoutes(path: string): PathRoutes {
    const colon = path.indexOf('/:');
    if (colon === -1) {
      let routes = this.exact.get(path);
      if (routes === undefined) this.exact.set(path, (routes = { byMethod: new Map(), allow: '' }));
      return routes;
    }
    const prefix = path.slice(0, colon + 1);
    const param = path.slice(colon + 2);
    if (param === '' || param.includes('/') || param.includes(':')) {
      throw new Error(`Route path ${path}: a :param must be the last segment`);
    }
    let entry = this.params.find((p) => p.prefix === prefix);
    if (entry === undefined) {
      entry = { prefix, param, routes: { byMethod: new Map(), allow: '' } };
      this.params.push(entry);
      this.params.sort((a, b) => b.prefix.length - a.prefix.length);
    }
    return entry.routes;
  }

  private add(route: Route): void {
    const routes = this.pathRoutes(route.path);
    for (const method of typeof route.method === 'string' ? [route.method] : route.method) {
      if (routes.byMethod.has(method)) throw new Error(`Route ${method} ${route.path} is declared twice`);
      routes.byMethod.set(method, route);
    }
    routes.allow = [...routes.byMethod.keys()].join(', ');
    this.notAllowed.set(routes, Object.freeze({ kind: 'method_not_allowed', allow: routes.allow }));
    this.exactMatches.set(route, Object.freeze({ kind: 'route', route, params: NO_PARAMS }));
  }

  /** The route for `method` on `path` (path without the query string). */
  match(method: string, path: string): RouteMatch {
    const exact = this.exact.get(path);
    if (exact !== undefined) {
      const route = exact.byMethod.get(method);
      return route === undefined ? this.notAllowed.get(exact)! : this.exactMatches.get(route)!;
    }
    for (const entry of this.params) {
      if (!path.startsWith(entry.prefix)) continue;
      const route = entry.routes.byMethod.get(method);
      if (route === undefined) return this.notAllowed.get(entry.routes)!;
      return { kind: 'route', route, params: { [entry.param]: decodeParam(path.slice(entry.prefix.length)) } };
    }
    return NOT_FOUND;
  }

  /** Every method served on `path` (for CORS preflights), or undefined for an unknown path. */
  allowed(path: string): string | undefined {
    const exact = this.exact.get(path);
    if (exact !== undefined) return exact.allow;
    for (const entry of this.params) if (path.startsWith(entry.prefix)) return entry.routes.allow;
    return undefined;
  }
}

/**
 * What the auth step says: the request may pass, as this caller or as nobody
 * in particular (null: no api_key step, auth off, the admin key), or the
 * refusal to answer with. A union rather than an object, so that passing
 * allocates nothing; `isRefusal` tells them apart.
 */
export type AuthVerdict = ApiCaller | null | GatewayError;

/** A refusal is a GatewayError (it has a `code`); a caller has none. */
export function isRefusal(verdict: AuthVerdict): verdict is GatewayError {
  return verdict !== null && 'code' in verdict;
}

/** The auth step. */
export function authVerdict(ctx: GatewayContext, auth: RouteAuth, req: IncomingMessage): AuthVerdict {
  switch (auth) {
    case 'none':
      return null;
    case 'api_key':
      return checkApiKey(ctx.apiKeys, req);
    case 'admin':
    case 'master_key':
      return adminKeyError(ctx.adminKey, req) ?? null;
    case 'api_key_or_admin': {
      const verdict = checkApiKey(ctx.apiKeys, req);
      // The API key's refusal is the one to report: the admin key is the exception, not the rule.
      return !isRefusal(verdict) || adminKeyError(ctx.adminKey, req) !== undefined ? verdict : null;
    }
  }
}
