/**
 * The one request pipeline of the APIs that go through the router (after the
 * route table's api_key step), whatever their dialect:
 *
 *   read the body, every guard ─► decode ─► router.execute ─► encode ─► finish (the server's, finish-call.ts)
 *   media type, priority header,   codec     aborted when     JSON, upstream   one metrics update,
 *   size (413), UTF-8, depth, JSON           the client goes  4xx or SSE       usage record, log line
 *
 * With tracing on, the request is a SERVER span from its arrival to its
 * finish, and the router's attempts CLIENT spans under it (tracing/).
 *
 * What differs between APIs is their codec (dialects/codec.ts:
 * chat-completions.ts, embeddings.ts, messages.ts, responses.ts); what a request learns on its way is its
 * Exchange (exchange.ts). Thin on purpose: the decisions (which target, when
 * to fail over) live in @mana/llm-router.
 */
import { isRouterError, type RouterResult, type StreamResult } from '@mana/llm-router';
import type { Call } from '../call.js';
import { ClientAbort } from '../http/client-abort.js';
import { fromRouterError, gatewayError } from '../http/errors.js';
import { discardBodyThenClose } from '../http/linger.js';
import { readJsonBody, type JsonBody } from '../http/read-json-body.js';
import { isJsonContentType, priorityOf } from '../http/request-headers.js';
import type { Headers } from '../http/respond.js';
import type { Exchange } from './exchange.js';
import type { DecodedRequest, InboundCodec } from '../dialects/codec.js';
import { KEY_CONCURRENCY_RETRY_AFTER_S, keyPolicyRefusal } from './key-policy.js';
import { closeStream, relayStream } from './relay-stream.js';

type ParsedBody = Extract<JsonBody, { kind: 'json' }>;

/**
 * The exchange the server opened for a route of an inbound API (server.ts):
 * a routed handler on a route without `inbound` is a table mistake.
 */
export function exchangeOf(call: Call): Exchange {
  if (call.exchange === undefined) throw new Error('a routed handler on a route without its inbound API');
  return call.exchange;
}

/**
 * Runs one routed request to its answer; the server finishes it (one metrics
 * update, one usage record, one log line, each attributed to the caller) and
 * answers whatever it throws.
 */
export async function handleRouted(codec: InboundCodec, call: Call): Promise<void> {
  const ex = exchangeOf(call);
  const body = await guardedBody(call, ex);
  if (body === undefined) return;
  const decoded = codec.decode(body.value, body);
  named(ex, body.value);
  if (!decoded.ok) return call.error(gatewayError(decoded.error.code, decoded.error.message, { param: decoded.error.param }));
  ex.askedFor(decoded.model);
  ex.stream = decoded.stream;
  ex.trace?.decoded(decoded.body, decoded.stream);
  const { ctx, req, res } = call;
  // The caller's key policy, before any upstream call: its aliases, default priority and concurrency.
  const refusal = keyPolicyRefusal(ctx, call.caller, ex, decoded.model, codec.operation);
  if (refusal !== undefined) {
    return call.error(refusal, refusal.code === 'key_concurrency_exceeded' ? { 'retry-after': KEY_CONCURRENCY_RETRY_AFTER_S } : undefined);
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
      original: decoded.original,
      optionalParameters: decoded.optionalParameters,
      nativeOnly: decoded.nativeOnly,
      stream: decoded.stream,
      priority: ex.priority,
      signal: abort,
      requestId: call.id,
      // Whose fair share of the router's schema workers this request uses.
      caller: callerName(call),
      // Not copied: each target's protocol picks out the few it passes on (Anthropic: `anthropic-beta`).
      clientHeaders: req.headers,
      // Each attempt becomes a CLIENT span under the request's, its context sent upstream (tracing on only).
      observer: ex.trace,
    });
  } catch (error) {
    return routerFailed(call, ex, error, decoded, abort);
  }
  ex.outcome = result.outcome;
  if (result.kind === 'stream') return relayAndRelease(codec, call, ex, result, abort, decoded);
  reply(codec, call, ex, result, abort, decoded);
}

/**
 * Who the router shares its work fairly between: the API key's caller, or with
 * keys off the client's address (behind a proxy, every client is the proxy's one).
 */
function callerName(call: Call): string {
  return call.caller !== null ? `key:${call.caller.id}` : `address:${call.req.socket.remoteAddress ?? 'unknown'}`;
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
 * parsed body, or undefined once its refusal is answered in the route's
 * dialect. Also the first step of a route of a codec's API that does not route
 * (`/v1/messages/count_tokens`), so both refuse a body alike.
 */
export async function guardedBody(call: Call, ex: Exchange): Promise<ParsedBody | undefined> {
  if (!headersAccepted(call, ex)) return undefined;
  return bodyAccepted(call, ex, await readJsonBody(call.req, call.ctx.maxBodyBytes));
}

/** Content-Type and X-Mana-LLM-Priority, checked before a byte of the body is read. */
function headersAccepted(call: Call, ex: Exchange): boolean {
  const headers = call.req.headers;
  if (!isJsonContentType(headers['content-type'])) {
    call.error(gatewayError('unsupported_media_type', 'Content-Type must be application/json.'));
    return false;
  }
  const priority = priorityOf(headers['x-mana-llm-priority']);
  if (priority === null) {
    call.error(gatewayError('invalid_header', `X-Mana-LLM-Priority must be "background" or "realtime".`, { param: 'x-mana-llm-priority' }));
    return false;
  }
  ex.priority = priority;
  return true;
}

/** The parsed body, or undefined once its refusal is answered (or the client went away while sending it). */
function bodyAccepted(call: Call, ex: Exchange, body: JsonBody): ParsedBody | undefined {
  switch (body.kind) {
    case 'json':
      return body;
    case 'too_large':
      // Answer and close; the rest of the body is never buffered, only read and
      // discarded for a bounded while so that the close cannot reset the 413 away.
      call.error(body.error, { connection: 'close' });
      discardBodyThenClose(call.req, call.res);
      return undefined;
    case 'aborted':
      ex.clientClosed();
      return undefined;
    case 'refused':
      call.error(body.error);
      return undefined;
  }
}

function routerFailed(call: Call, ex: Exchange, error: unknown, decoded: DecodedRequest, abort: ClientAbort): void {
  if (isRouterError(error)) ex.outcome = error.outcome;
  if (abort.aborted || call.res.destroyed) return ex.clientClosed();
  if (!isRouterError(error)) throw error;
  call.error(fromRouterError(error, decoded.model));
}

/**
 * Whatever ends the relay — the last event, a client gone, a throw while writing the
 * head — the router's stream is closed here: that frees its upstream connection,
 * in-flight count and background slot (closing an ended stream does nothing).
 */
async function relayAndRelease(codec: InboundCodec, call: Call, ex: Exchange, result: StreamResult, abort: ClientAbort, decoded: DecodedRequest): Promise<void> {
  try {
    if (abort.aborted || call.res.destroyed) return ex.clientClosed();
    const headers = Object.assign(call.headers(), resultHeaders(result));
    await relayStream(call.ctx, call.res, ex, result, headers, abort, codec.streamEncoder(result, decoded));
  } finally {
    await closeStream(result);
    noteSkippedEvents(call, result);
  }
}

/** Unparsable upstream events the stream went on without: counted by target, logged once per request. */
function noteSkippedEvents(call: Call, result: StreamResult): void {
  const skipped = result.skippedEvents ?? 0;
  if (skipped === 0) return;
  const target = result.outcome.target;
  call.ctx.metrics.upstreamEventsSkipped(target, skipped);
  call.ctx.logger.warn({ req_id: call.id, target, skipped_events: skipped }, 'upstream stream events skipped (not JSON)');
}

/** A JSON answer, or the upstream's own refusal of the request. */
function reply(codec: InboundCodec, call: Call, ex: Exchange, result: Exclude<RouterResult, StreamResult>, abort: ClientAbort, decoded: DecodedRequest): void {
  if (abort.aborted || call.res.destroyed) return ex.clientClosed();
  const headers = resultHeaders(result);
  if (result.kind === 'upstream_error') {
    // The request itself was refused upstream (400, 422, …): every target would say the same.
    ex.code = `upstream_${result.status}`;
    const relayed = codec.encodeUpstreamError(result);
    call.text(result.status, relayed.contentType, relayed.body, headers);
    return;
  }
  ex.tokenUsage = result.usage;
  call.text(result.status, 'application/json', codec.encodeJson(result, decoded), headers);
}

/**
 * What every API's answer carries besides the call's own headers: the relayed attempt's rate-limit headers
 * (the router already filtered them), X-Mana-LLM-Embedding-Space, X-Mana-LLM-Dropped-Tools.
 */
function resultHeaders(result: RouterResult): Headers {
  const headers: Headers = { ...result.headers };
  // Lets a consumer refuse vectors from a space its index was not built with.
  if (result.kind === 'json' && result.embeddingSpace !== undefined) headers['x-mana-llm-embedding-space'] = result.embeddingSpace;
  // The answer came from a target that got the request without these hosted tools (`hosted_tools: drop`): they never ran.
  if (result.droppedTools !== undefined) headers['x-mana-llm-dropped-tools'] = result.droppedTools.join(', ');
  return headers;
}
