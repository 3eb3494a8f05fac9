/**
 * The one request pipeline of the APIs that go through the router (after the
 * route table's api_key step), whatever their dialect:
 *
 *   read the body, every guard ─► decode ─► router.execute ─► encode ─► finish
 *   media type, priority header,   codec     aborted when     JSON, upstream   one metrics update,
 *   size (413), UTF-8, depth, JSON           the client goes  4xx or SSE       usage record, log line
 *
 * With tracing on, the request is a SERVER span from its arrival to its
 * finish, and the router's attempts CLIENT spans under it (tracing/).
 *
 * What differs between APIs is their codec (inbound-codec.ts:
 * chat-completions.ts, embeddings.ts, messages.ts, responses.ts); what a request learns on its way is its
 * Exchange (exchange.ts). Thin on purpose: the decisions (which target, when
 * to fail over) live in @mana/llm-router.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRouterError, type RouterResult, type StreamResult } from '@mana/llm-router';
import type { GatewayContext } from '../context.js';
import type { ApiCaller } from '../http/api-caller.js';
import { ClientAbort } from '../http/client-abort.js';
import { fromRouterError, gatewayError, type GatewayError } from '../http/errors.js';
import { discardBodyThenClose } from '../http/linger.js';
import { readJsonBody, type JsonBody } from '../http/read-json-body.js';
import { isJsonContentType, priorityOf } from '../http/request-headers.js';
import { sendError, sendText, type Headers } from '../http/respond.js';
import { Exchange, finishExchange } from './exchange.js';
import type { DecodedRequest, InboundCodec } from './inbound-codec.js';
import { KEY_CONCURRENCY_RETRY_AFTER_S, keyPolicyRefusal } from './key-policy.js';
import { closeStream, relayStream } from './relay-stream.js';

type ParsedBody = Extract<JsonBody, { kind: 'json' }>;

/**
 * Runs one routed request to its end: one metrics update, one usage record, one
 * log line, each attributed to `caller` (who the API key names; null with auth
 * off or refused). A request the auth step refused (`refusal`) is answered at once, in
 * the API's dialect, and counted and logged like any other (nothing to await).
 */
export function handleRouted(
  codec: InboundCodec,
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  startedAt: number,
  caller: ApiCaller | null,
  refusal?: GatewayError,
): Promise<void> | undefined {
  const ex = new Exchange(requestId, startedAt, codec, caller);
  ex.trace = ctx.tracing?.requestStarted(req, codec, requestId, startedAt);
  ctx.metrics.requestStarted();
  if (refusal === undefined) return serveToTheEnd(codec, ctx, req, res, ex);
  try {
    fail(codec, ctx, res, ex, refusal);
  } finally {
    finishExchange(ctx, req, ex);
  }
  return undefined;
}

async function serveToTheEnd(codec: InboundCodec, ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<void> {
  try {
    await serve(codec, ctx, req, res, ex);
  } catch (error) {
    // Anything unexpected: never crash, never leak internals.
    ctx.logger.error({ req_id: ex.requestId, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'unexpected error');
    if (!res.headersSent) fail(codec, ctx, res, ex, gatewayError('internal_error', 'The gateway could not process the request.'));
    else if (!res.writableEnded) res.destroy();
    ex.status = ex.status || 500;
  } finally {
    ex.keyLease?.release();
    finishExchange(ctx, req, ex);
  }
}

/** The steps in order; each one that answers (a refusal, a client gone) ends the request there. */
async function serve(codec: InboundCodec, ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<void> {
  const body = await guardedBody(codec, ctx, req, res, ex);
  if (body === undefined) return;
  const decoded = codec.decode(body.value, body);
  named(ex, body.value);
  if (!decoded.ok) {
    return fail(codec, ctx, res, ex, gatewayError(decoded.error.code, decoded.error.message, { param: decoded.error.param }));
  }
  ex.model = decoded.model === undefined ? undefined : decoded.model.slice(0, 200);
  ex.stream = decoded.stream;
  ex.trace?.decoded(decoded.body, decoded.stream);
  // The caller's key policy, before any upstream call: its aliases, default priority and concurrency.
  const refusal = keyPolicyRefusal(ctx, ex, decoded.model, codec.operation);
  if (refusal !== undefined) {
    if (refusal.code === 'key_concurrency_exceeded') res.setHeader('retry-after', KEY_CONCURRENCY_RETRY_AFTER_S);
    return fail(codec, ctx, res, ex, refusal);
  }

  // Client disconnect aborts the upstream request. `res` 'close' fires for a
  // socket closed at any point (request 'close' fires as soon as the body is read).
  const abort = new ClientAbort(res);
  let result: RouterResult;
  try {
    result = await ctx.router.execute({
      model: decoded.model,
      operation: codec.operation,
      body: decoded.body,
      // The client's text goes upstream with only `model` replaced, when the decoded body is exactly its parse.
      bodyText: body.scan.model !== undefined && decoded.body === body.value ? { text: body.text, modelStart: body.scan.model.start, modelEnd: body.scan.model.end } : undefined,
      source: decoded.source,
      optionalParameters: decoded.optionalParameters,
      nativeOnly: decoded.nativeOnly,
      stream: decoded.stream,
      priority: ex.priority,
      signal: abort,
      requestId: ex.requestId,
      // Whose fair share of the router's schema workers this request uses.
      caller: callerName(ex, req),
      // Not copied: each target's protocol picks out the few it passes on (Anthropic: `anthropic-beta`).
      clientHeaders: req.headers,
      // Each attempt becomes a CLIENT span under the request's, its context sent upstream (tracing on only).
      observer: ex.trace,
    });
  } catch (error) {
    return routerFailed(codec, ctx, res, ex, error, decoded, abort);
  }
  ex.outcome = result.outcome;
  if (result.kind === 'stream') return relayAndRelease(codec, ctx, res, ex, result, abort, decoded);
  reply(codec, ctx, res, ex, result, abort, decoded);
}

/**
 * Who the router shares its work fairly between: the API key's caller, or with
 * keys off the client's address (behind a proxy, every client is the proxy's one).
 */
function callerName(ex: Exchange, req: IncomingMessage): string {
  return ex.caller !== null ? `key:${ex.caller.id}` : `address:${req.socket.remoteAddress ?? 'unknown'}`;
}

/** Header-safe alias names: nothing a response head could not carry, bounded like the logged model. */
const HEADER_SAFE_ALIAS = /^[\w./:@+-]{1,200}$/;

/**
 * The `model` and `stream` the body states, before decoding judges it: a
 * request refused for its body is still logged with its real `stream` and
 * the alias it named, and answers with X-Mana-LLM-Alias.
 */
function named(ex: Exchange, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const { model, stream } = value as { model?: unknown; stream?: unknown };
  if (typeof model === 'string' && HEADER_SAFE_ALIAS.test(model)) ex.namedAlias = model;
  ex.stream = stream === true;
}

/**
 * The body guards (media type, priority header, size, UTF-8, depth, JSON): the
 * parsed body, or undefined once its refusal is answered in the codec's
 * dialect. Also the first step of a route of a codec's API that does not route
 * (`/v1/messages/count_tokens`), so both refuse a body alike.
 */
export async function guardedBody(codec: InboundCodec, ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, ex: Exchange): Promise<ParsedBody | undefined> {
  if (!headersAccepted(codec, ctx, req, res, ex)) return undefined;
  return bodyAccepted(codec, ctx, req, res, ex, await readJsonBody(req, ctx.maxBodyBytes));
}

/** Content-Type and X-Mana-LLM-Priority, checked before a byte of the body is read. */
function headersAccepted(codec: InboundCodec, ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, ex: Exchange): boolean {
  if (!isJsonContentType(req.headers['content-type'])) {
    fail(codec, ctx, res, ex, gatewayError('unsupported_media_type', 'Content-Type must be application/json.'));
    return false;
  }
  const priority = priorityOf(req.headers['x-mana-llm-priority']);
  if (priority === null) {
    fail(codec, ctx, res, ex, gatewayError('invalid_header', `X-Mana-LLM-Priority must be "background" or "realtime".`, { param: 'x-mana-llm-priority' }));
    return false;
  }
  ex.priority = priority;
  return true;
}

/** The parsed body, or undefined once its refusal is answered (or the client went away while sending it). */
function bodyAccepted(codec: InboundCodec, ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, ex: Exchange, body: JsonBody): ParsedBody | undefined {
  switch (body.kind) {
    case 'json':
      return body;
    case 'too_large':
      // Answer and close; the rest of the body is never buffered, only read and
      // discarded for a bounded while so that the close cannot reset the 413 away.
      res.setHeader('connection', 'close');
      fail(codec, ctx, res, ex, body.error);
      discardBodyThenClose(req, res);
      return undefined;
    case 'aborted':
      ex.clientClosed();
      return undefined;
    case 'refused':
      fail(codec, ctx, res, ex, body.error);
      return undefined;
  }
}

function routerFailed(codec: InboundCodec, ctx: GatewayContext, res: ServerResponse, ex: Exchange, error: unknown, decoded: DecodedRequest, abort: ClientAbort): void {
  if (isRouterError(error)) ex.outcome = error.outcome;
  if (abort.aborted || res.destroyed) return ex.clientClosed();
  if (!isRouterError(error)) throw error;
  fail(codec, ctx, res, ex, fromRouterError(error, decoded.model));
}

/**
 * Whatever ends the relay — the last event, a client gone, a throw while writing the
 * head — the router's stream is closed here: that frees its upstream connection,
 * in-flight count and background slot (closing an ended stream does nothing).
 */
async function relayAndRelease(
  codec: InboundCodec,
  ctx: GatewayContext,
  res: ServerResponse,
  ex: Exchange,
  result: StreamResult,
  abort: ClientAbort,
  decoded: DecodedRequest,
): Promise<void> {
  try {
    if (abort.aborted || res.destroyed) return ex.clientClosed();
    await relayStream(ctx, res, ex, result, responseHeaders(ex, result), abort, codec.streamEncoder(result, decoded));
  } finally {
    await closeStream(result);
    noteSkippedEvents(ctx, ex, result);
  }
}

/** Unparsable upstream events the stream went on without: counted by target, logged once per request. */
function noteSkippedEvents(ctx: GatewayContext, ex: Exchange, result: StreamResult): void {
  const skipped = result.skippedEvents ?? 0;
  if (skipped === 0) return;
  const target = result.outcome.target;
  ctx.metrics.upstreamEventsSkipped(target, skipped);
  ctx.logger.warn({ req_id: ex.requestId, target, skipped_events: skipped }, 'upstream stream events skipped (not JSON)');
}

/** A JSON answer, or the upstream's own refusal of the request. */
function reply(
  codec: InboundCodec,
  ctx: GatewayContext,
  res: ServerResponse,
  ex: Exchange,
  result: Exclude<RouterResult, StreamResult>,
  abort: ClientAbort,
  decoded: DecodedRequest,
): void {
  if (abort.aborted || res.destroyed) return ex.clientClosed();
  const headers = responseHeaders(ex, result);
  ex.ttfbAt = performance.now();
  ex.status = result.status;
  if (result.kind === 'upstream_error') {
    // The request itself was refused upstream (400, 422, …): every target would say the same.
    ex.code = `upstream_${result.status}`;
    const relayed = codec.encodeUpstreamError(result);
    sendText(res, ctx.state, result.status, relayed.contentType, relayed.body, headers);
    return;
  }
  ex.tokenUsage = result.usage;
  sendText(res, ctx.state, result.status, 'application/json', codec.encodeJson(result, decoded), headers);
}

/** The same for every API: X-Request-Id, X-Mana-LLM-* (X-Mana-LLM-Dropped-Tools too), the relayed attempt's rate-limit headers. */
function responseHeaders(ex: Exchange, result: RouterResult): Headers {
  // Rate-limit headers of the relayed attempt only (the router already filtered them).
  const headers: Headers = { ...result.headers, ...ex.headers() };
  // Lets a consumer refuse vectors from a space its index was not built with.
  if (result.kind === 'json' && result.embeddingSpace !== undefined) headers['x-mana-llm-embedding-space'] = result.embeddingSpace;
  // The answer came from a target that got the request without these hosted tools (`hosted_tools: drop`): they never ran.
  if (result.droppedTools !== undefined) headers['x-mana-llm-dropped-tools'] = result.droppedTools.join(', ');
  return headers;
}

/** Answers `error` in the codec's dialect, with the exchange's headers (X-Request-Id, X-Mana-LLM-*, Retry-After). */
export function fail(codec: InboundCodec, ctx: GatewayContext, res: ServerResponse, ex: Exchange, error: GatewayError): void {
  ex.status = error.status;
  ex.code = error.code;
  if (!res.headersSent) ex.ttfbAt = performance.now();
  sendError(res, ctx.state, error, ex.headers(), codec.encodeError);
}
