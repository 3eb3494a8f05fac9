import type { EventEmitter } from 'node:events';
import type { BodyText, ChatRequestBody, ClientHeaders, EmbeddingRequestBody, NativeProtocol, OriginalRequest, ProviderConfig, TargetConfig, Usage } from '../types.js';

/**
 * The contract between the attempt loop and a provider protocol. An adapter
 * maps one OpenAI-shaped request onto its wire format and maps the answer back;
 * it never decides about failover (that is `attempt/classify-error.ts`).
 *
 * Network failures are thrown (undici errors keep their `code`); HTTP answers,
 * good or bad, are returned so the caller can classify them by status.
 */
export interface AdapterCall<Body = ChatRequestBody> {
  readonly provider: ProviderConfig;
  readonly target: TargetConfig;
  readonly body: Body;
  /** `body` as the client wrote it, when known: see `BodyText`. */
  readonly bodyText?: BodyText | undefined;
  /**
   * Aborts the upstream request: fires when the caller aborts or when the
   * attempt's first-byte timeout runs out (the reason is then an error with
   * code `first_byte_timeout`). Aborting destroys the upstream socket at once.
   * Anything undici accepts: an AbortSignal, or an EventEmitter that emits
   * `abort` and carries `aborted` / `reason` (see `attempt/first-byte-timer.ts`).
   */
  readonly signal: AbortSignal | EventEmitter | undefined;
  /**
   * The attempt's first-byte clock. `complete()` stops it when the response
   * headers arrive (a non-stream body may then take its time, e.g. behind
   * keep-alive padding); `stream()` leaves it running, because for a stream the
   * caller stops it at the first content delta (see `attempt/stream-commit.ts`).
   */
  readonly firstByte: { stop(): void } | undefined;
  /** The client's request headers (see RouterRequest): a protocol picks out the few it passes on. */
  readonly clientHeaders?: ClientHeaders | undefined;
  /**
   * The client's request as written when `body` translates it from another
   * protocol (see OriginalRequest): a target of that protocol sends it instead of `body`.
   */
  readonly original?: OriginalRequest | undefined;
  /**
   * Headers the request's observer adds to this one call (its `traceparent`), already
   * checked against the provider's `propagate_trace`; the call's own headers win.
   */
  readonly traceHeaders?: Readonly<Record<string, string>> | undefined;
}

/** Response headers worth relaying: `x-ratelimit-*` and `retry-after` only. */
export type RelayHeaders = Record<string, string>;

/** A non-2xx HTTP answer, body kept verbatim for relaying or classification. */
export interface HttpFailure {
  readonly ok: false;
  readonly status: number;
  readonly body: string;
  readonly contentType: string | undefined;
  readonly headers: RelayHeaders;
}

export interface JsonSuccess {
  readonly ok: true;
  readonly status: number;
  /** An OpenAI `chat.completion` object (for `embed()`, an OpenAI embedding `list`). */
  readonly body: Record<string, unknown>;
  /**
   * The upstream's JSON text when `body` is exactly its parse (the dialect took the
   * answer as it is): relayed as written instead of re-serialised. Undefined when
   * the dialect built `body` itself (Ollama).
   */
  readonly text: string | undefined;
  readonly headers: RelayHeaders;
  /**
   * Set when the call went out natively (the request is written in this
   * protocol): the upstream's answer as it wrote it, for the caller;
   * `body` is then its OpenAI translation, which the answer checks and usage read.
   */
  readonly native?: NativeAnswer | undefined;
}

/** An answer in the protocol the client's request is written in, untranslated. */
export interface NativeAnswer {
  readonly protocol: NativeProtocol;
  readonly body: Record<string, unknown>;
  readonly text: string;
}

export type AdapterResponse = JsonSuccess | HttpFailure;

/**
 * One decoded stream event.
 * - `chunk`: `data` is the JSON text of an OpenAI `chat.completion.chunk` (of a
 *   native stream, the upstream event's own JSON: see StreamOpen.native);
 *   `delta` is true when it carries content, reasoning or tool-call deltas
 *   (the moment the router may commit to this target).
 * - `error`: an error event inside the stream (OpenAI `{"error":…}`, Ollama `{"error":"…"}`).
 * - `done`: the protocol's clean end marker (`[DONE]`, Ollama `done: true` after its last chunk).
 */
export type StreamEvent =
  | {
      readonly type: 'chunk';
      readonly data: string;
      readonly delta: boolean;
      /** A choice carries a non-null `finish_reason`. */
      readonly finish?: boolean;
      /** The finish reasons of a finish chunk, when its decoder read them already (else they are read from `data`). */
      readonly finishReasons?: readonly string[];
      /** A choice finished with `content_filter` (set only when true). */
      readonly filtered?: boolean;
      /** A choice carries a `refusal` delta (set only when true); a refusal commits a stream like content. */
      readonly refusal?: boolean;
      readonly usage?: Usage;
      /**
       * A usage-only chunk (`choices: []`) the gateway asked for on the client's
       * behalf: its usage is recorded, the chunk itself is not relayed.
       */
      readonly hidden?: boolean;
    }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'done' };

/** Turns raw body bytes into events; throws `InvalidResponseError` on malformed data. */
export interface StreamDecoder {
  push(chunk: Uint8Array): StreamEvent[];
  /** The body ended; flush what is left. */
  end(): StreamEvent[];
  /** Events skipped so far because they carried no JSON object (stream-event-json.ts): the stream went on without them. */
  readonly skippedEvents: number;
}

export interface StreamOpen {
  readonly ok: true;
  readonly status: number;
  readonly headers: RelayHeaders;
  /**
   * Raw body chunks, fed by the dispatch handler (`adapters/body-chunks.ts`): errors
   * after the headers reject `next()`; `destroy()` before the end closes the upstream
   * connection; a slow reader pauses the upstream socket.
   */
  readonly body: AsyncIterable<Uint8Array> & { destroy(error?: Error): unknown };
  readonly decoder: StreamDecoder;
  /**
   * Set when the call went out natively: the decoder's chunks then carry the
   * upstream's own events in this protocol (flagged as their translation would be),
   * not `chat.completion.chunk`s.
   */
  readonly native?: NativeProtocol | undefined;
}

export type AdapterStream = StreamOpen | HttpFailure;

export interface Adapter {
  /**
   * The first request parameter this protocol cannot honour: the target is skipped
   * before any call. Never one for a request it takes as written (`original` in this protocol).
   */
  unsupportedParameter(body: ChatRequestBody, original?: OriginalRequest): string | undefined;
  /**
   * Whether a call with this `original` goes out as the client wrote it (it is
   * written in this protocol): what the translation leaves out (RouterRequest.nativeOnly)
   * then reaches the upstream anyway.
   */
  takesNatively(original: OriginalRequest | undefined): boolean;
  /** Non-streaming call. */
  complete(call: AdapterCall): Promise<AdapterResponse>;
  /** Streaming call; resolves when the response headers arrive. */
  stream(call: AdapterCall): Promise<AdapterStream>;
  /** Embeddings call; a success body is an OpenAI embedding `list` (`data[].embedding`, `usage`). */
  embed(call: AdapterCall<EmbeddingRequestBody>): Promise<AdapterResponse>;
  /** The provider's model listing (the health probe's cheap call; spends no tokens). */
  listModels(provider: ProviderConfig, signal: AbortSignal): Promise<string[]>;
}

/** The upstream sent something that is not its protocol (bad JSON, wrong shape). */
export class InvalidResponseError extends Error {
  override readonly name = 'InvalidResponseError';
  readonly code = 'invalid_response';
}

/**
 * The upstream sent more than a configured bound lets us hold (`max_response_bytes`,
 * `max_stream_event_bytes`, `max_pre_commit_bytes`): the answer is dropped and the
 * attempt fails over. The message names the setting and the bound, never upstream data.
 */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  readonly code = 'response_too_large';

  constructor(setting: string, limit: number, what: string) {
    super(`${what} exceeds ${setting} (${limit} bytes)`);
  }
}

/** The request cannot be expressed in this provider's protocol (e.g. a remote image URL for Ollama). */
export class UnsupportedRequestError extends Error {
  override readonly name = 'UnsupportedRequestError';
  readonly code = 'unsupported_request';
}
