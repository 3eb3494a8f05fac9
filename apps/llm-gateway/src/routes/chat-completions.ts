/**
 * POST /v1/chat/completions and POST /v1/embeddings (after the route table's
 * api_key step): read body → validate → router.execute → relay (JSON, the
 * upstream's own 4xx, or an SSE stream: relay-stream.ts). One pipeline for
 * both, parameterised by a `RoutedEndpoint` (its validator and router
 * operation), so headers, errors, metrics and the log line cannot drift apart.
 * Thin on purpose: the decisions (which target, when to fail over) live in
 * @mana/llm-router.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRouterError, type ChatRequestBody, type EmbeddingRequestBody, type Operation, type Priority, type RouterResult } from '@mana/llm-router';
import type { GatewayContext } from '../context.js';
import { ClientAbort } from '../http/client-abort.js';
import { discardBodyThenClose } from '../http/linger.js';
import { fromRouterError, gatewayError, type GatewayError } from '../http/errors.js';
import { sendError, sendJson, sendText, type Headers } from '../http/respond.js';
import { upstreamErrorBody } from '../http/upstream-error-body.js';
import { readJsonBody } from '../http/read-json-body.js';
import { validateChatRequest, type ChatValidationError, type Validation } from '../http/validate-chat.js';
import { validateEmbeddingRequest, type EmbeddingValidationError } from '../http/validate-embeddings.js';
import { Exchange, finishExchange } from './exchange.js';
import { closeStream, relayStream } from './relay-stream.js';

/** `application/json`, `application/json; charset=utf-8`, `application/vnd.x+json`, or no Content-Type at all. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const semi = header.indexOf(';');
  const type = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** What differs between the routes that go through the router. */
export interface RoutedEndpoint {
  /** The path named in the log line. */
  readonly path: string;
  /** What the router is asked for; it also picks the alias a request without `model` gets. */
  readonly operation: Operation;
  validate(parsed: unknown): Validation<ChatRequestBody | EmbeddingRequestBody, ChatValidationError['code'] | EmbeddingValidationError['code']>;
}

export const CHAT_COMPLETIONS: RoutedEndpoint = {
  path: '/v1/chat/completions',
  operation: 'chat',
  validate: validateChatRequest,
};

export const EMBEDDINGS: RoutedEndpoint = {
  path: '/v1/embeddings',
  operation: 'embedding',
  validate: validateEmbeddingRequest,
};

export function priorityOf(header: string | string[] | undefined): Priority | undefined | null {
  if (header === undefined) return undefined;
  if (header === 'background' || header === 'realtime') return header;
  return null;
}

function completionHeaders(ex: Exchange, result: RouterResult): Headers {
  // Rate-limit headers of the relayed attempt only (the router already filtered them).
  const headers: Headers = { ...result.headers, ...ex.headers() };
  // Lets a consumer refuse vectors from a space its index was not built with.
  if (result.kind === 'json' && result.embeddingSpace !== undefined) headers['x-mana-llm-embedding-space'] = result.embeddingSpace;
  return headers;
}

function fail(ctx: GatewayContext, res: ServerResponse, ex: Exchange, error: GatewayError): void {
  ex.status = error.status;
  ex.code = error.code;
  if (!res.headersSent) ex.ttfbAt = performance.now();
  sendError(res, ctx.state, error, ex.headers());
}

/** Runs one routed request (`CHAT_COMPLETIONS` or `EMBEDDINGS`) to its end: one metrics update, one log line. */
export async function handleRouted(
  endpoint: RoutedEndpoint,
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  startedAt: number,
): Promise<void> {
  const ex = new Exchange(requestId, startedAt, endpoint.path);
  ctx.metrics.requestStarted();
  try {
    await serve(endpoint, ctx, req, res, ex);
  } catch (error) {
    // Anything unexpected: never crash, never leak internals.
    ctx.logger.error({ req_id: requestId, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'unexpected error');
    if (!res.headersSent) fail(ctx, res, ex, gatewayError('internal_error', 'The gateway could not process the request.'));
    else if (!res.writableEnded) res.destroy();
    ex.status = ex.status || 500;
  } finally {
    finishExchange(ctx, req, ex);
  }
}

/** A request the auth step refused: answered, counted and logged like any other routed request. */
export function refuseRouted(
  endpoint: RoutedEndpoint,
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  startedAt: number,
  error: GatewayError,
): void {
  const ex = new Exchange(requestId, startedAt, endpoint.path);
  ctx.metrics.requestStarted();
  try {
    fail(ctx, res, ex, error);
  } finally {
    finishExchange(ctx, req, ex);
  }
}

async function serve(endpoint: RoutedEndpoint, ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<void> {
  if (!isJsonContentType(req.headers['content-type'])) {
    return fail(ctx, res, ex, gatewayError('unsupported_media_type', 'Content-Type must be application/json.'));
  }
  const priority = priorityOf(req.headers['x-mana-llm-priority']);
  if (priority === null) {
    return fail(
      ctx,
      res,
      ex,
      gatewayError('invalid_header', `X-Mana-LLM-Priority must be "background" or "realtime".`, { param: 'x-mana-llm-priority' }),
    );
  }
  ex.priority = priority;

  const body = await readJsonBody(req, ctx.maxBodyBytes);
  if (body.kind === 'too_large') {
    // Answer and close; the rest of the body is never buffered, only read and
    // discarded for a bounded while so that the close cannot reset the 413 away.
    res.setHeader('connection', 'close');
    fail(ctx, res, ex, body.error);
    discardBodyThenClose(req, res);
    return;
  }
  if (body.kind === 'aborted') return ex.clientClosed();
  if (body.kind === 'refused') return fail(ctx, res, ex, body.error);
  const { text, value: parsed, scan } = body;
  const valid = endpoint.validate(parsed);
  if (!valid.ok) {
    return fail(ctx, res, ex, gatewayError(valid.error.code, valid.error.message, { param: valid.error.param }));
  }
  ex.model = valid.model === undefined ? undefined : valid.model.slice(0, 200);
  ex.stream = valid.stream;

  // Client disconnect aborts the upstream request. `res` 'close' fires for a
  // socket closed at any point (request 'close' fires as soon as the body is read).
  const abort = new ClientAbort(res);

  let result: RouterResult;
  try {
    result = await ctx.router.execute({
      model: valid.model,
      operation: endpoint.operation,
      body: valid.body,
      // The client's text goes upstream with only `model` replaced, when the validated body is exactly its parse.
      bodyText: scan.model !== undefined && valid.body === parsed ? { text, modelStart: scan.model.start, modelEnd: scan.model.end } : undefined,
      stream: valid.stream,
      priority,
      signal: abort,
      requestId: ex.requestId,
    });
  } catch (error) {
    if (isRouterError(error)) ex.outcome = error.outcome;
    if (abort.aborted || res.destroyed) return ex.clientClosed();
    if (!isRouterError(error)) throw error;
    return fail(ctx, res, ex, fromRouterError(error, valid.model));
  }

  ex.outcome = result.outcome;
  if (result.kind === 'stream') {
    // Whatever ends the relay — the last event, a client gone, a throw while writing the
    // head — the router's stream is closed here: that frees its upstream connection,
    // in-flight count and background slot (closing an ended stream does nothing).
    try {
      if (abort.aborted || res.destroyed) return ex.clientClosed();
      await relayStream(ctx, res, ex, result, completionHeaders(ex, result), abort);
    } finally {
      await closeStream(result);
    }
    return;
  }
  if (abort.aborted || res.destroyed) return ex.clientClosed();

  const headers = completionHeaders(ex, result);
  ex.ttfbAt = performance.now();
  ex.status = result.status;
  if (result.kind === 'upstream_error') {
    // The request itself was refused upstream (400, 422, …): every target would say the same.
    ex.code = `upstream_${result.status}`;
    const relayed = upstreamErrorBody(result.status, result.contentType, result.body);
    sendText(res, ctx.state, result.status, relayed.contentType, relayed.body, headers);
    return;
  }
  ex.tokenUsage = result.usage;
  // The upstream's own text when the router took its answer as it is: the same JSON, not serialised a second time.
  if (result.text !== undefined) sendText(res, ctx.state, result.status, 'application/json', result.text, headers);
  else sendJson(res, ctx.state, result.status, result.body, headers);
}
