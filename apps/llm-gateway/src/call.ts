/**
 * One request as every handler receives it: the request and its response,
 * its id and arrival time, the route's params, who the API key names, the
 * route's dialect and, on an inbound API's route, its Exchange (what it learns
 * on its way). When it ends, the call and its exchange together become the
 * request's one finished record (finished-request.ts).
 *
 * Every answer goes through `json`, `text` or `error`, which write the
 * gateway's headers (X-Request-Id, the dialect's other id headers, the
 * exchange's X-Mana-LLM-*) in one place: a handler names only its own. The
 * server (server.ts) creates the call, runs its handler in the only
 * try/catch, and finishes it (finish-call.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayContext } from './context.js';
import type { ApiCaller } from './http/api-caller.js';
import type { Dialect } from './dialects/dialect.js';
import { errorBody, type GatewayError } from './http/errors.js';
import { requestIdOf } from './http/request-id.js';
import { sendError, sendText, type Headers } from './http/respond.js';
import type { Exchange } from './pipeline/exchange.js';

/** A path's `:param` values by name (route-table.ts), decoded. */
export type RouteParams = Readonly<Record<string, string>>;

/** The params of every exact path: one shared frozen object, so matching allocates nothing. */
export const NO_PARAMS: RouteParams = Object.freeze({});

export class Call {
  /** The path's `:param` value (decoded), empty for exact paths. */
  params: RouteParams = NO_PARAMS;
  /** Who the API key names: null on routes without the api_key step, with auth off, for the admin key, and when refused. */
  caller: ApiCaller | null = null;
  /** The route's dialect; undefined: OpenAI's error shape and X-Request-Id alone. */
  dialect: Dialect | undefined = undefined;
  /** Set on an inbound API's route: the request is counted, recorded and logged as one of that API's. */
  exchange: Exchange | undefined = undefined;

  /** X-Request-Id: the client's when sane, else generated (http/request-id.ts); it names the request on every header, line and record. */
  readonly id: string;

  constructor(
    readonly ctx: GatewayContext,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** `performance.now()` when the request arrived. */
    readonly startedAt: number,
  ) {
    this.id = requestIdOf(req.headers['x-request-id']);
  }

  /** A fresh object with the gateway's headers, for an answer this call writes. */
  headers(): Headers {
    const headers: Headers = { 'x-request-id': this.id };
    const dialect = this.dialect;
    if (dialect !== undefined) for (const name of dialect.requestIdHeaders) headers[name] = this.id;
    this.exchange?.addRoutingHeaders(headers);
    return headers;
  }

  text(status: number, contentType: string, body: string, extra?: Headers): void {
    this.answered(status);
    sendText(this.res, this.ctx.state, status, contentType, body, this.withHeaders(extra));
  }

  json(status: number, value: unknown, extra?: Headers): void {
    this.text(status, 'application/json', JSON.stringify(value), extra);
  }

  /** An error with its status (and Retry-After), in the route's dialect; its code goes on the exchange's record. */
  error(error: GatewayError, extra?: Headers): void {
    this.answered(error.status);
    if (this.exchange !== undefined) this.exchange.code = error.code;
    sendError(this.res, this.ctx.state, error, this.withHeaders(extra), this.dialect?.encodeError ?? errorBody);
  }

  /** The exchange's record of the answer: its status, and when its head went out. */
  private answered(status: number): void {
    const ex = this.exchange;
    if (ex === undefined) return;
    ex.status = status;
    if (!this.res.headersSent) ex.ttfbAt = performance.now();
  }

  private withHeaders(extra: Headers | undefined): Headers {
    const headers = this.headers();
    return extra === undefined ? headers : Object.assign(headers, extra);
  }
}
