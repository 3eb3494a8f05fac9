/**
 * What one inbound API adds to the routed pipeline (routed-pipeline.ts): it
 * decodes its request body into the router's one request, and encodes the
 * router's result (a JSON answer, an upstream's refusal, a committed stream)
 * and the gateway's errors in its own dialect. Everything else is the
 * pipeline's and stays shared by every API: the body guards, the router call
 * (targets, failover), the X-Request-Id and X-Mana-LLM-* headers, Retry-After,
 * metrics, the usage record and the log line.
 *
 * Chat completions and embeddings speak OpenAI's dialect, which is also the
 * router's (openai/openai-codec.ts); an API in another dialect (Anthropic
 * Messages, OpenAI Responses) is one more module implementing this interface.
 *
 * Hot path: the pipeline calls `decode` and one `encode…` once per request,
 * and `StreamEncoder.event` once per stream event, on the values it already
 * holds. A codec in the router's dialect passes them through (the parsed body
 * itself, the upstream's text, `data: <event>`): no second parse or serialise.
 */
import type { JsonResult, NativeOnlyPart, Operation, OriginalRequest, RouterRequest, StreamResult, UpstreamErrorResult } from '@mana/llm-router';
import type { GatewayError, GatewayErrorCode } from '../http/errors.js';
import type { JsonBody } from '../http/read-json-body.js';
import type { RelayedBody } from '../http/upstream-error-body.js';
import type { Validation } from './routed-body.js';
import type { InboundRoute } from './inbound-api.js';

/**
 * A decoded request body: the router's body, the model asked for and whether
 * to stream, or the 400 to answer. When `body` is the parsed value itself
 * (nothing translated or dropped), the client's text goes upstream as written.
 * A codec of another dialect than the router's may also keep the client's
 * request as written (`original`), for a target of that protocol; name the body's
 * parameters that are hints (`optionalParameters`, RouterRequest's) and what
 * only a target taking the request natively can honour (`nativeOnly`: hosted
 * tools, RouterRequest's); and keep
 * what its encoders repeat of the request (`echo`: a Responses answer states
 * the request's instructions, tools and sampling), and the client's names of
 * tools it renamed to fit chat's flat tool list (`toolNames`: chat name → the
 * client's name and namespace, responses/tool-namespaces.ts).
 */
export type Decoded = Validation<RouterRequest['body'], GatewayErrorCode> & {
  readonly original?: OriginalRequest | undefined;
  readonly optionalParameters?: readonly string[] | undefined;
  readonly nativeOnly?: readonly NativeOnlyPart[] | undefined;
  readonly echo?: Readonly<Record<string, unknown>> | undefined;
  readonly toolNames?: ReadonlyMap<string, ClientToolName> | undefined;
};

/** A request that decoded: what the encoders may need of it (the model the client named, its body). */
export type DecodedRequest = Extract<Decoded, { ok: true }>;

/** The request body as read: its parse, its text and where its top-level `model` is. */
export type ReadBody = Extract<JsonBody, { kind: 'json' }>;

/** The SSE frames of one committed stream, in the API's dialect. */
export interface StreamEncoder {
  /** The frames for one event of the router's stream (a `chat.completion.chunk`'s JSON text). */
  event(chunk: string): string;
  /** The closing frames, once the router's stream ended (`result.usage` is final then). */
  end(result: StreamResult): string;
  /**
   * The frames that end a stream which failed after its head was sent: the
   * client must be able to tell a truncated answer from a complete one.
   */
  failed(error: GatewayError): string;
}

export interface InboundCodec extends InboundRoute {
  /** What the router is asked for; it also picks the alias a request without `model` gets. */
  readonly operation: Operation;
  /**
   * The parsed JSON body (already size-, UTF-8- and depth-checked) → the router's request body.
   * `body` (its text) is there for a codec that keeps the client's request as written (`Decoded.original`).
   */
  decode(parsed: unknown, body: ReadBody): Decoded;
  /** The JSON body of a successful answer. */
  encodeJson(result: JsonResult, request: DecodedRequest): string;
  /** The body of an upstream's refusal of the request (400, 422, …), relayed with its status. */
  encodeUpstreamError(result: UpstreamErrorResult): RelayedBody;
  /** The encoder of one committed stream (called once, when its head is written). */
  streamEncoder(result: StreamResult, request: DecodedRequest): StreamEncoder;
}

/** A tool as the client named it, when its API renamed it to fit chat's flat tool list (responses/tool-namespaces.ts). */
export interface ClientToolName {
  readonly name: string;
  readonly namespace: string;
}
