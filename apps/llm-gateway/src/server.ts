/**
 * The HTTP server: raw node:http (no framework on the hot path), timeouts so a
 * slow or broken client cannot hold a connection, and a flat dispatch by path.
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { GatewayContext } from './context.js';
import { apiKeyError } from './http/auth.js';
import { errorBody, gatewayError } from './http/errors.js';
import { requestIdOf } from './http/request-id.js';
import { sendError, type Headers } from './http/respond.js';
import { requestLogLine } from './logging.js';
import { handleAdminReload } from './routes/admin-reload.js';
import { handleAliases } from './routes/aliases.js';
import { handleChatCompletions } from './routes/chat-completions.js';
import { handleHealth } from './routes/health.js';
import { handleMetrics } from './routes/metrics.js';
import { handleModel, handleModels } from './routes/models.js';
import { handleHealthz, handleReadyz } from './routes/probes.js';

export const SERVER_TIMEOUTS = {
  headersTimeoutMs: 15_000, // 15 s to send the request head (capped by the request timeout)
  keepAliveTimeoutMs: 5_000, // 5 s idle keep-alive before the server closes the connection
  connectionsCheckingIntervalMs: 1_000, // 1 s: how often Node enforces the two request timeouts
} as const;

const MAX_HEADER_BYTES = 32 * 1024; // 32 KB of request headers

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function methodNotAllowed(ctx: GatewayContext, res: ServerResponse, requestId: string, allow: string): void {
  sendError(res, ctx.state, gatewayError('method_not_allowed', `Use ${allow} on this path.`), {
    'x-request-id': requestId,
    allow,
  });
}

/** Sends the 401 and returns true when the request lacks an accepted API key. */
function needsApiKey(ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, requestId: string): boolean {
  const error = apiKeyError(ctx.apiKeys, req);
  if (error === undefined) return false;
  sendError(res, ctx.state, error, { 'x-request-id': requestId });
  return true;
}

/** Routes a request. Chat completions log their own line; other routes are logged by `handle` at debug level. */
function dispatch(ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, requestId: string, path: string): void | Promise<void> {
  const method = req.method;

  switch (path) {
    case '/healthz':
      return method === 'GET' || method === 'HEAD' ? handleHealthz(ctx, res) : methodNotAllowed(ctx, res, requestId, 'GET');
    case '/readyz':
      return method === 'GET' || method === 'HEAD' ? handleReadyz(ctx, res) : methodNotAllowed(ctx, res, requestId, 'GET');
    case '/metrics':
      return method === 'GET' ? handleMetrics(ctx, res, requestId) : methodNotAllowed(ctx, res, requestId, 'GET');
    case '/admin/reload':
      return method === 'POST' ? handleAdminReload(ctx, req, res, requestId) : methodNotAllowed(ctx, res, requestId, 'POST');
    case '/v1/models':
    case '/models':
      if (method !== 'GET') return methodNotAllowed(ctx, res, requestId, 'GET');
      if (needsApiKey(ctx, req, res, requestId)) return;
      return handleModels(ctx, res, requestId);
    case '/v1/aliases':
      if (method !== 'GET') return methodNotAllowed(ctx, res, requestId, 'GET');
      if (needsApiKey(ctx, req, res, requestId)) return;
      return handleAliases(ctx, res, requestId);
    case '/v1/health':
      if (method !== 'GET') return methodNotAllowed(ctx, res, requestId, 'GET');
      if (needsApiKey(ctx, req, res, requestId)) return;
      return handleHealth(ctx, res, requestId);
  }

  if (path.startsWith('/v1/models/')) {
    if (method !== 'GET') return methodNotAllowed(ctx, res, requestId, 'GET');
    if (needsApiKey(ctx, req, res, requestId)) return;
    let id: string;
    try {
      id = decodeURIComponent(path.slice('/v1/models/'.length));
    } catch {
      id = path.slice('/v1/models/'.length);
    }
    return handleModel(ctx, res, requestId, id);
  }

  sendError(res, ctx.state, gatewayError('not_found', `No route for ${method ?? ''} ${path.slice(0, 200)}.`), {
    'x-request-id': requestId,
  });
}

/** Runs a route; an unexpected error becomes a 500 (or a closed stream), never a crash. */
async function handle(ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, startedAt: number): Promise<void> {
  let requestId = '';
  const path = pathOf(req.url);
  try {
    requestId = requestIdOf(req.headers['x-request-id']);
    if (path === '/v1/chat/completions' || path === '/chat/completions') {
      if (req.method === 'POST') return await handleChatCompletions(ctx, req, res, requestId, startedAt);
      return methodNotAllowed(ctx, res, requestId, 'POST');
    }
    await dispatch(ctx, req, res, requestId, path);
  } catch (error) {
    ctx.logger.error({ req_id: requestId || undefined, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'unhandled route error');
    // The id lets an operator find this request's log line; it is known unless requestIdOf itself threw.
    const headers: Headers = requestId === '' ? {} : { 'x-request-id': requestId };
    if (!res.headersSent) sendError(res, ctx.state, gatewayError('internal_error', 'The gateway could not process the request.'), headers);
    else res.destroy();
    return;
  }
  if (ctx.logger.isLevelEnabled('debug')) {
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

export function createGatewayServer(ctx: GatewayContext, requestTimeoutMs: number): Server {
  const server = createServer(
    {
      headersTimeout: Math.min(SERVER_TIMEOUTS.headersTimeoutMs, requestTimeoutMs),
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: SERVER_TIMEOUTS.connectionsCheckingIntervalMs,
      keepAliveTimeout: SERVER_TIMEOUTS.keepAliveTimeoutMs,
      maxHeaderSize: MAX_HEADER_BYTES,
      noDelay: true,
    },
    (req, res) => {
      void handle(ctx, req, res, performance.now());
    },
  );
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
