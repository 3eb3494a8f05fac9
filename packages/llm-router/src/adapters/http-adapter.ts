import type { ChatRequestBody, EmbeddingRequestBody, NativeProtocol, OriginalRequest, ProviderConfig } from '../types.js';
import type { Adapter, AdapterCall, AdapterResponse, AdapterStream, StreamDecoder } from './adapter.js';
import { passThrough } from './pass-through.js';
import { openBody } from './body-chunks.js';
import { clientAskedUsage } from './stream-usage.js';
import { collectBody } from './collect-body.js';
import { bodyLimits, bodyTimeout, type Dispatchers, httpFailure, httpFailureOf, parseJson, providerHeaders, relayHeaders, splitBaseUrl } from './http.js';

/**
 * What one wire protocol adds to the shared HTTP plumbing: its paths, how an
 * OpenAI-shaped request maps onto its body, and how its answers map back.
 * A dialect is plain data plus pure functions, defined once per protocol at
 * module level, so a request allocates nothing for it.
 */
export interface Dialect {
  /** Chat endpoint, appended to the provider's base path. */
  readonly chatPath: string;
  /** Embeddings endpoint, appended to the provider's base path. */
  readonly embedPath: string;
  /** Model-listing endpoint (the health probe's call), appended to the base path. */
  readonly modelsPath: string;
  /** Names the listing in probe errors (`<listingName> answered 503`). */
  readonly listingName: string;
  /**
   * This protocol, when a client's request can already be written in it (a NativeProtocol:
   * Messages, `anthropic`). A request whose `original` is written in it goes upstream as
   * the client wrote it, with only `model` replaced (pass-through.ts), and the answer
   * comes back as the upstream wrote it: beside its translation (`JsonSuccess.native`),
   * or as the events of a native stream decoder.
   */
  readonly nativeProtocol?: NativeProtocol;
  /** The first request parameter this protocol cannot honour (the target is then skipped), or undefined. */
  unsupportedParameter(body: ChatRequestBody): string | undefined;
  /**
   * The upstream request body: a value to serialise, or its JSON text already made
   * (a string, see `pass-through.ts`); may throw `UnsupportedRequestError` before any network call.
   */
  toRequestBody(call: AdapterCall, stream: boolean): unknown;
  /** A parsed non-stream answer → OpenAI `chat.completion`; throws `InvalidResponseError`. */
  parseCompletion(json: unknown): Record<string, unknown>;
  /**
   * A native answer as the client gets it: the same value when it goes out as the
   * upstream wrote it, else a changed copy (Anthropic: tool_use ids a next turn would refuse).
   */
  nativeAnswer?(json: unknown): unknown;
  /**
   * `maxEventBytes`: the largest SSE event / NDJSON line held while waiting for its end (`max_stream_event_bytes`).
   * `clientAskedUsage`: the caller's body set `stream_options.include_usage`; when not, usage
   * the dialect requested on its own is recorded but kept out of the relayed chunks.
   * `native`: the call went out natively; the chunks carry the upstream's own events.
   */
  newStreamDecoder(maxEventBytes: number, clientAskedUsage: boolean, native: boolean): StreamDecoder;
  /** The upstream embeddings body (as for `toRequestBody`); may throw `UnsupportedRequestError` before any network call. */
  toEmbeddingBody(call: AdapterCall<EmbeddingRequestBody>): unknown;
  /** A parsed embeddings answer → an OpenAI embedding `list`; throws `InvalidResponseError` on the wrong shape. */
  parseEmbeddings(json: unknown, call: AdapterCall<EmbeddingRequestBody>): Record<string, unknown>;
  /** A parsed listing → model names; throws when it is not the expected shape. */
  parseModelList(json: unknown): string[];
  /**
   * The headers this protocol sends on every call, the key among them; they win over a
   * provider's own `headers`. Default: `Authorization: Bearer <key>` when there is a key.
   */
  protocolHeaders?(apiKey: string | undefined): Readonly<Record<string, string>>;
  /** Headers one call takes from the caller's request (Anthropic: `anthropic-beta`); undefined when none. */
  callHeaders?(call: AdapterCall<unknown>): Readonly<Record<string, string>> | undefined;
}

/** What a provider needs on every request, computed once per provider object. */
interface Prepared {
  readonly origin: string;
  readonly chatPath: string;
  readonly embedPath: string;
  readonly modelsPath: string;
  readonly postHeaders: Record<string, string>;
  readonly getHeaders: Record<string, string>;
}

/** One adapter over undici keep-alive pools; the `Dialect` supplies everything protocol-specific. */
export class HttpAdapter implements Adapter {
  private readonly prepared = new WeakMap<ProviderConfig, Prepared>();

  constructor(
    private readonly dialect: Dialect,
    private readonly dispatchers: Dispatchers,
  ) {}

  unsupportedParameter(body: ChatRequestBody, original?: OriginalRequest): string | undefined {
    // The client's request as written in this protocol: the upstream judges it itself.
    if (this.takesNatively(original)) return undefined;
    return this.dialect.unsupportedParameter(body);
  }

  takesNatively(original: OriginalRequest | undefined): boolean {
    return original !== undefined && original.protocol === this.dialect.nativeProtocol;
  }

  complete(call: AdapterCall): Promise<AdapterResponse> {
    const p = this.prepare(call.provider);
    const original = this.asWritten(call);
    return this.postJson(p, call, p.chatPath, this.chatBody(call, original, false), (json) => this.dialect.parseCompletion(json), original?.protocol);
  }

  embed(call: AdapterCall<EmbeddingRequestBody>): Promise<AdapterResponse> {
    const p = this.prepare(call.provider);
    return this.postJson(p, call, p.embedPath, this.dialect.toEmbeddingBody(call), (json) => this.dialect.parseEmbeddings(json, call));
  }

  /** One non-stream POST: the whole answer, parsed by the dialect when it is a 2xx. */
  private async postJson(
    p: Prepared,
    call: AdapterCall<unknown>,
    path: string,
    body: unknown,
    parse: (json: unknown) => Record<string, unknown>,
    native?: NativeProtocol,
  ): Promise<AdapterResponse> {
    const dispatcher = this.dispatchers.get(p.origin, call.target.settings.connectTimeoutMs);
    // The whole body as one string without a body Readable (see collect-body.ts); the
    // first-byte clock stops at the response headers.
    const res = await collectBody(dispatcher, postOptions(call, path, body, this.postHeaders(p, call)), call.signal, call.firstByte, bodyLimits(call.target));
    if (res.statusCode >= 300) return httpFailureOf(res.statusCode, res.headers, res.text);
    const parsed = parseJson(res.text, 'response is not JSON');
    const json = native === undefined || this.dialect.nativeAnswer === undefined ? parsed : this.dialect.nativeAnswer(parsed);
    const answer = parse(json);
    // The same object: the text says exactly what the answer holds, so it can be relayed as is.
    const ok = { ok: true, status: res.statusCode, body: answer, text: answer === parsed ? res.text : undefined, headers: relayHeaders(res.headers) } as const;
    // `parse` checked that the answer is an object of the protocol's shape.
    const text = json === parsed ? res.text : JSON.stringify(json);
    return native === undefined ? ok : { ...ok, native: { protocol: native, body: json as Record<string, unknown>, text } };
  }

  async stream(call: AdapterCall): Promise<AdapterStream> {
    const p = this.prepare(call.provider);
    const original = this.asWritten(call);
    const options = postOptions(call, p.chatPath, this.chatBody(call, original, true), this.postHeaders(p, call));
    const dispatcher = this.dispatchers.get(p.origin, call.target.settings.connectTimeoutMs);
    // Body chunks straight from the dispatch handler to the decoder (see body-chunks.ts).
    const res = await openBody(dispatcher, options, call.signal);
    if (res.statusCode >= 300) return httpFailure(res.statusCode, res.headers, res.body, call.target);
    return {
      ok: true,
      status: res.statusCode,
      headers: relayHeaders(res.headers),
      body: res.body,
      decoder: this.dialect.newStreamDecoder(call.target.settings.maxStreamEventBytes, clientAskedUsage(call.body), original !== undefined),
      ...(original === undefined ? {} : { native: original.protocol }),
    };
  }

  /** The client's request as written when it is written in this protocol: the call then goes out natively. */
  private asWritten(call: AdapterCall): OriginalRequest | undefined {
    return this.takesNatively(call.original) ? call.original : undefined;
  }

  /** The chat body: the client's request as written with only `model` (and `stream`, if it disagrees) changed, else the dialect's translation. */
  private chatBody(call: AdapterCall, original: OriginalRequest | undefined, stream: boolean): unknown {
    if (original === undefined) return this.dialect.toRequestBody(call, stream);
    const own = { target: call.target, body: original.body, bodyText: original.bodyText };
    return passThrough(own, (original.body.stream === true) === stream ? {} : { stream });
  }

  async listModels(provider: ProviderConfig, signal: AbortSignal): Promise<string[]> {
    const p = this.prepare(provider);
    const timeout = provider.settings.probeTimeoutMs;
    const dispatcher = this.dispatchers.get(p.origin, provider.settings.connectTimeoutMs);
    const options = { method: 'GET' as const, path: p.modelsPath, headers: p.getHeaders, headersTimeout: timeout, bodyTimeout: timeout };
    // Bounded like a chat answer: a listing is upstream data too (max_response_bytes).
    const res = await collectBody(dispatcher, options, signal, undefined, bodyLimits(provider));
    if (res.statusCode >= 300) throw new Error(`${this.dialect.listingName} answered ${res.statusCode}`);
    return this.dialect.parseModelList(JSON.parse(res.text) as unknown);
  }

  /** The provider's headers, plus those this call takes from the caller's request and its trace context (a copy only then). */
  private postHeaders(p: Prepared, call: AdapterCall<unknown>): Record<string, string> {
    const extra = this.dialect.callHeaders?.(call);
    const trace = call.traceHeaders;
    // Object.assign, not object spread: V8 copies a small fresh object ~15× faster this way (1.3 µs → 0.08 µs a call).
    if (trace === undefined) return extra === undefined ? p.postHeaders : Object.assign({}, p.postHeaders, extra);
    // Under the call's own headers: a trace context never replaces the key or a header the provider sets.
    return Object.assign({}, trace, p.postHeaders, extra);
  }

  private prepare(provider: ProviderConfig): Prepared {
    let p = this.prepared.get(provider);
    if (p === undefined) {
      const { origin, basePath, query } = splitBaseUrl(provider.baseUrl);
      p = {
        origin,
        // The base URL's query string (e.g. `?api-version=2024-10-21`) goes on every call.
        chatPath: basePath + this.dialect.chatPath + query,
        embedPath: basePath + this.dialect.embedPath + query,
        modelsPath: withQuery(basePath + this.dialect.modelsPath, query),
        postHeaders: providerHeaders(provider, true, this.dialect.protocolHeaders),
        getHeaders: providerHeaders(provider, false, this.dialect.protocolHeaders),
      };
      this.prepared.set(provider, p);
    }
    return p;
  }
}

/** `path` with the base URL's query string (`?…` or `''`) added, after a query of its own if it has one. */
function withQuery(path: string, query: string): string {
  return query === '' || !path.includes('?') ? path + query : path + '&' + query.slice(1);
}

function postOptions(call: AdapterCall<unknown>, path: string, body: unknown, headers: Record<string, string>) {
  return {
    method: 'POST' as const,
    path,
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    headersTimeout: 0, // timed precisely by the attempt's first-byte timer instead
    bodyTimeout: bodyTimeout(call.target),
  };
}
