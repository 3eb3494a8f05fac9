/**
 * The HTTP server: raw node:http (no framework on the hot path), timeouts so a
 * slow or broken client cannot hold a connection, and dispatch through the
 * route table (`routes/gateway-routes.ts`): each request one Call (call.ts),
 * its handler run in the gateway's only try/catch, the call finished in its
 * `finally` (finish-call.ts).
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Call } from './call.js';
import type { GatewayContext } from './context.js';
import { finishCall } from './finish-call.js';
import { errorBody, gatewayError } from './http/errors.js';
import type { CorsPolicy } from './http/cors.js';
import { authVerdict, isRefusal, type RouteTable } from './http/route-table.js';
import { Exchange } from './pipeline/exchange.js';
import type { InboundRoute } from './dialects/inbound-api.js';
import { gatewayRouteTable } from './routes/gateway-routes.js';
import { pathOf } from './http/url.js';

export const SERVER_TIMEOUTS = {
  headersTimeoutMs: 15_000, // 15 s to send the request head (capped by the request timeout)
  keepAliveTimeoutMs: 5_000, // 5 s idle keep-alive before the server closes the connection
  connectionsCheckingIntervalMs: 1_000, // 1 s: how often Node enforces the two request timeouts
} as const;

const MAX_HEADER_BYTES = 32 * 1024; // 32 KB of request headers

/** CORS (only when configured): answers a preflight (true), or adds the headers of an actual response. */
function answeredByCors(cors: CorsPolicy, table: RouteTable, req: IncomingMessage, res: ServerResponse, path: string): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  if (cors.preflight(req, res, origin, table.allowed(path))) return true;
  cors.decorate(res, origin);
  return false;
}

/** A request of an inbound API: counted as started, its SERVER span opened when it routes (tracing on). */
function openExchange(call: Call, inbound: InboundRoute): Exchange {
  const ex = new Exchange(inbound);
  const { operation } = inbound;
  // The route is only built while tracing is on: the optional call skips its arguments otherwise.
  if (operation !== undefined) ex.trace = call.ctx.tracing?.requestStarted(call.req, { path: inbound.path, api: inbound.api, operation }, call.id, call.startedAt);
  call.ctx.metrics.requestStarted();
  return ex;
}

/**
 * Matching (404, 405 with the table's Allow), the auth step, then the
 * handler. A request of an inbound API gets its exchange before the auth step
 * answers, so that a refused one is counted and logged like any other.
 */
function dispatch(call: Call, table: RouteTable): void | Promise<void> {
  const { ctx, req } = call;
  const path = pathOf(req.url);
  if (ctx.cors !== undefined && answeredByCors(ctx.cors, table, req, call.res, path)) return;
  const method = req.method ?? '';
  const match = table.match(method, path);
  if (match.kind === 'not_found') return call.error(gatewayError('not_found', `No route for ${method} ${path.slice(0, 200)}.`));
  if (match.kind === 'method_not_allowed') return call.error(gatewayError('method_not_allowed', `Use ${match.allow} on this path.`), { allow: match.allow });
  const { route, params } = match;
  call.params = params;
  call.dialect = route.inbound ?? route.dialect;
  const verdict = authVerdict(ctx, route.auth, req);
  if (!isRefusal(verdict)) call.caller = verdict;
  if (route.inbound !== undefined) call.exchange = openExchange(call, route.inbound);
  if (isRefusal(verdict)) return call.error(verdict);
  return route.handler(call);
}

/**
 * The error funnel: whatever a route throws becomes a 500 internal_error in
 * the route's dialect with X-Request-Id (or a closed connection once the head
 * was sent), never a crash; the call is finished either way.
 */
async function handle(ctx: GatewayContext, table: RouteTable, req: IncomingMessage, res: ServerResponse, startedAt: number): Promise<void> {
  const call = new Call(ctx, req, res, startedAt);
  try {
    await dispatch(call, table);
  } catch (error) {
    ctx.logger.error({ req_id: call.id, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'unhandled route error');
    if (!res.headersSent) call.error(gatewayError('internal_error', 'The gateway could not process the request.'));
    else if (!res.writableEnded) res.destroy();
  } finally {
    finishCall(call);
  }
}

/** The HTTP server with its limits and the answer to malformed requests; no routes yet. */
function createHttpServer(requestTimeoutMs: number): Server {
  const server = createServer({
    headersTimeout: Math.min(SERVER_TIMEOUTS.headersTimeoutMs, requestTimeoutMs),
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: SERVER_TIMEOUTS.connectionsCheckingIntervalMs,
    keepAliveTimeout: SERVER_TIMEOUTS.keepAliveTimeoutMs,
    maxHeaderSize: MAX_HEADER_BYTES,
    noDelay: true,
  });
  // A malformed request, oversized headers or a request not received in time:
  // answer 400/431/408 and close, never crash.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (!socket.writable || (error.code === 'ECONNRESET')) {
      socket.destroy();
      return;
    }
    const gwError =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? gatewayError('headers_too_large', 'Request headers too large.')
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? gatewayError('request_timeout', 'The request was not received in time.')
          : gatewayError('bad_request', 'Malformed HTTP request.');
    const body = errorBody(gwError);
    const reason = STATUS_CODES[gwError.status] ?? 'Bad Request';
    socket.end(
      `HTTP/1.1 ${gwError.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}

function serveRoutes(server: Server, ctx: GatewayContext, table: RouteTable): void {
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void handle(ctx, table, req, res, performance.now());
  });
}

/** A server answering through `table` (default: every gateway route), not listening yet. */
export function createGatewayServer(ctx: GatewayContext, requestTimeoutMs: number, table: RouteTable = gatewayRouteTable()): Server {
  const server = createHttpServer(requestTimeoutMs);
  serveRoutes(server, ctx, table);
  return server;
}

/** A server bound to its address that serves nothing yet. */
export interface BoundServer {
  readonly server: Server;
  readonly address: AddressInfo;
  /** From now on requests reach the gateway's routes (called once, with the context complete). */
  serve(ctx: GatewayContext): void;
  /** Stops listening: a start that failed after binding. */
  close(): Promise<void>;
}

/**
 * Binds the address before the gateway is built, so that what is built can
 * know the port actually bound (`--port 0` lets the system pick it). Until
 * `serve`, every connection is closed as soon as it is accepted: a client
 * sees what a port nobody listens on gives it, a failed connection, and no
 * request ever reaches a gateway still being built.
 */
export async function bindGatewayServer(port: number, host: string, requestTimeoutMs: number): Promise<BoundServer> {
  const server = createHttpServer(requestTimeoutMs);
  const closeWhileStarting = (socket: Socket): void => {
    socket.destroy();
  };
  server.on('connection', closeWhileStarting);
  const address = await listen(server, port, host);
  return {
    server,
    address,
    serve(ctx) {
      server.off('connection', closeWhileStarting);
      serveRoutes(server, ctx, gatewayRouteTable());
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(
        new Error(
          error.code === 'EADDRINUSE'
            ? `Port ${port} on ${host} is already in use: stop the other process or pass --port.`
            : `Cannot listen on ${host}:${port}: ${error.message}`,
        ),
      );
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
