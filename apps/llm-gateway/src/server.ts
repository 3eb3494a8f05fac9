/**
 * The HTTP server: raw node:http (no framework on the hot path), timeouts so a
 * slow or broken client cannot hold a connection, and dispatch through the
 * route table (`routes/gateway-routes.ts`) with one error funnel.
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { GatewayContext } from './context.js';
import { errorBody, gatewayError, type GatewayError } from './http/errors.js';
import type { CorsPolicy } from './http/cors.js';
import { requestIdOf } from './http/request-id.js';
import { sendError, type Headers } from './http/respond.js';
import { authVerdict, isRefusal, type RouteMatch, type RouteTable } from './http/route-table.js';
import { requestLogLine } from './logging.js';
import { gatewayRouteTable } from './routes/gateway-routes.js';
import { pathOf } from './http/url.js';

export const SERVER_TIMEOUTS = {
  headersTimeoutMs: 15_000, // 15 s to send the request head (capped by the request timeout)
  keepAliveTimeoutMs: 5_000, // 5 s idle keep-alive before the server closes the connection
  connectionsCheckingIntervalMs: 1_000, // 1 s: how often Node enforces the two request timeouts
} as const;

const MAX_HEADER_BYTES = 32 * 1024; // 32 KB of request headers

/** A route matched, or a request already answered (404, 405, refused by auth), logged by its route or not. */
type Admission = Extract<RouteMatch, { kind: 'route' }> | 'answered' | 'answered_and_logged';

/** Matches the route; answers 404 and 405 itself. */
function matchRoute(ctx: GatewayContext, table: RouteTable, req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Admission {
  const method = req.method ?? '';
  const match = table.match(method, path);
  if (match.kind === 'not_found') {
    sendError(res, ctx.state, gatewayError('not_found', `No route for ${method} ${path.slice(0, 200)}.`), { 'x-request-id': requestId });
    return 'answered';
  }
  if (match.kind === 'method_not_allowed') {
    sendError(res, ctx.state, gatewayError('method_not_allowed', `Use ${match.allow} on this path.`), {
      'x-request-id': requestId,
      allow: match.allow,
    });
    return 'answered';
  }
  return match;
}

/** Answers a request its route's auth step refused: the route's own way, or the plain error answer. */
function refuse(
  ctx: GatewayContext,
  match: Extract<RouteMatch, { kind: 'route' }>,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  startedAt: number,
  refusal: GatewayError,
): Admission {
  if (match.route.refused === undefined) {
    sendError(res, ctx.state, refusal, { 'x-request-id': requestId });
    return 'answered';
  }
  match.route.refused(ctx, req, res, requestId, startedAt, refusal);
  return match.route.logsItself === true ? 'answered_and_logged' : 'answered';
}

/** CORS (only when configured): answers a preflight (true), or adds the headers of an actual response. */
function answeredByCors(cors: CorsPolicy, table: RouteTable, req: IncomingMessage, res: ServerResponse, path: string): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  if (cors.preflight(req, res, origin, table.allowed(path))) return true;
  cors.decorate(res, origin);
  return false;
}

/**
 * The error funnel: whatever a route throws becomes a 500 internal_error with
 * X-Request-Id (or a closed connection once the head was sent), never a crash.
 */
async function handle(ctx: GatewayContext, table: RouteTable, req: IncomingMessage, res: ServerResponse, startedAt: number): Promise<void> {
  let requestId = '';
  const path = pathOf(req.url);
  let admission: Admission = 'answered';
  try {
    requestId = requestIdOf(req.headers['x-request-id']);
    if (ctx.cors === undefined || !answeredByCors(ctx.cors, table, req, res, path)) {
      admission = matchRoute(ctx, table, req, res, requestId, path);
    }
    if (typeof admission === 'object') {
      // The auth step: a refusal is answered here, a pass hands the handler its caller.
      const verdict = authVerdict(ctx, admission.route.auth, req);
      if (isRefusal(verdict)) admission = refuse(ctx, admission, req, res, requestId, startedAt, verdict);
      else await admission.route.handler(ctx, req, res, requestId, admission.params, startedAt, verdict);
    }
  } catch (error) {
    ctx.logger.error({ req_id: requestId || undefined, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'unhandled route error');
    // The id lets an operator find this request's log line; it is known unless requestIdOf itself threw.
    const headers: Headers = requestId === '' ? {} : { 'x-request-id': requestId };
    if (!res.headersSent) sendError(res, ctx.state, gatewayError('internal_error', 'The gateway could not process the request.'), headers);
    else res.destroy();
    return;
  }
  const loggedByRoute =
    admission === 'answered_and_logged' || (typeof admission === 'object' && admission.route.logsItself === true);
  if (!loggedByRoute && ctx.logger.isLevelEnabled('debug')) {
    ctx.logger.debug(
      requestLogLine({
        requestId,
        method: req.method ?? '',
        path: path.slice(0, 200),
        status: res.statusCode,
        durationMs: performance.now() - startedAt,
      }),
      'request',
    );
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
