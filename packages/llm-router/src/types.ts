/**
 * Public types of @mana/llm-router: the contract between the engine and its
 * callers (the gateway). The router knows nothing about HTTP servers: it takes a
 * request object and returns a result object or throws a RouterError.
 */

import type { AttemptReason } from './attempt/attempt-reasons.js';
import type { Strategy } from './config/strategies.js';

/** How a chain is ordered for one request. */
export type { Strategy };

/** What to do when every target of an alias is skipped before any call. */
export type OnAllUnhealthy = 'fail' | 'try_anyway';

/** Provider wire protocol: OpenAI-compatible, Ollama's native API, Anthropic's Messages API. */
export type ProviderType = 'openai' | 'ollama' | 'anthropic';

/**
 * What a target that cannot run a request's hosted tools (NativeOnlyPart) does
 * with it: `refuse` (skipped, `unsupported_parameter`) or `drop` (it gets the
 * request without them, and the result says which: ResultBase.droppedTools).
 */
export type HostedToolsPolicy = 'refuse' | 'drop';

/** `realtime` requests never wait; `background` requests pass a concurrency limit and may wait out rate limits. */
export type Priority = 'realtime' | 'background';

/** Tunables with defaults; every duration is in milliseconds. Overridable per provider and per alias. */
export interface Settings {
  probeIntervalMs: number; // default 30_000 (30 s)
  probeTimeoutMs: number; // default 3_000 (3 s)
  failureThreshold: number; // default 2 consecutive failures
  unhealthyPeriodMs: number; // default 60_000 (60 s)
  rateLimitCooldownMs: number; // default 15_000 (15 s), or the upstream's Retry-After
  connectTimeoutMs: number; // default 5_000 (5 s)
  firstByteTimeoutMs: number; // default 45_000 cloud, 300_000 local (ollama)
  streamIdleTimeoutMs: number; // default 30_000 (30 s): the longest silence inside a committed stream
  retries: number; // default 0: retry the same target this many times before failing over
  retryMaxWaitMs: number; // default 10_000 (10 s): cap on a honoured Retry-After between retries
  maxResponseBytes: number; // default 33_554_432 (32 MiB): a larger non-stream answer fails over (response_too_large)
  maxErrorBodyBytes: number; // default 65_536 (64 KiB): an upstream error body is truncated to this
  maxStreamEventBytes: number; // default 4_194_304 (4 MiB): a larger SSE event / NDJSON line fails the stream (response_too_large)
  maxPreCommitBytes: number; // default 1_048_576 (1 MiB): stream chunks held before the first delta; more fails over
  /** Tokens the target's context holds (prompt + answer); undefined: unknown, never checked. Ollama: its `num_ctx`. */
  contextWindow?: number | undefined;
  /** Tokens kept free for the answer when the request sets no `max_tokens` (default 512). */
  contextReserve: number;
  /** Realtime: how long to wait for a slot of a full target before moving on to the next usable one (default 0). */
  queueTimeoutMs: number;
  /** Background: how long to wait for a slot of a full target (default 600_000, 10 min). */
  backgroundQueueTimeoutMs: number;
  /** A target that cannot run the request's hosted tools: skipped (`refuse`, default) or sent the request without them (`drop`). */
  hostedTools: HostedToolsPolicy;
  /**
   * `hedge_after`: when the attempt in flight has no first content delta (non-stream: no answer)
   * this long after it started, the next usable target is called too and the first to answer wins.
   * 0 (the default): off.
   */
  hedgeAfterMs: number;
}

/** USD per million tokens. */
export interface Price {
  readonly input: number;
  readonly output: number;
  /** Prompt tokens the upstream served from its cache; priced as `input` when absent. */
  readonly cachedInput: number | undefined;
}

export interface ProviderConfig {
  /** Name used as the `provider/` prefix, e.g. `groq`. */
  readonly name: string;
  readonly type: ProviderType;
  readonly baseUrl: string;
  /** Resolved secret; never logged, never put in errors, views or events. */
  readonly apiKey: string | undefined;
  /** Whether this provider needs an API key to be usable (cloud providers do). */
  readonly requiresApiKey: boolean;
  /** Ollama `options` (e.g. `{ num_ctx: 8192 }`), merged into each request. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Opt-in for OpenAI-compatible providers: skip targets whose model the `/models` probe does not list. */
  readonly checkModels: boolean;
  /** Extra static headers (e.g. OpenRouter's `HTTP-Referer`). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Every credential this provider sends: the API key and the values of its
   * credential headers (see isCredentialHeader), each also without an auth
   * scheme (`Bearer …`). Never shown; error text is redacted against them.
   */
  readonly secrets: readonly string[];
  readonly settings: Settings;
  /** What this provider's calls cost, unless a target says otherwise; undefined: unknown. */
  readonly price: Price | undefined;
  /**
   * Chat request parameters this provider's server refuses although its
   * protocol has them (`unsupported_parameters`: an OpenAI-compatible server
   * that answers `reasoning_effort` with a 400). They count as the protocol's
   * own refusals: a request that needs one skips the target; one that marks it
   * optional (RouterRequest.optionalParameters) reaches the target without it.
   */
  readonly unsupportedParameters: readonly string[];
  /**
   * `propagate_trace`: the headers a request's observer asks to add to an upstream
   * call (its W3C `traceparent`, see CallObserver) are sent to this provider.
   * Default true; false for the built-in cloud providers (built-in-providers.ts).
   */
  readonly propagateTrace: boolean;
  /** `max_concurrency`: requests in flight to this provider (all its models) at once; undefined: unlimited. */
  readonly concurrency?: ConcurrencyLimit | undefined;
  /** `rpm` / `tpm`: the provider's quota per minute (all its models share it); undefined: neither declared. */
  readonly rates?: readonly RateLimit[] | undefined;
}

/**
 * A `max_concurrency` in force for a target: its provider's (all its models
 * count together) or the chain entry's own (that target counts alone).
 */
export interface ConcurrencyLimit {
  /** The counter it shares: `provider:<name>` or `target:<id>`. */
  readonly key: string;
  readonly kind: 'provider' | 'target';
  readonly name: string;
  /** The configured total (a replica's share of it: RouterOptions.capacityShare). */
  readonly limit: number;
}

/** What a rate limit counts: requests (`rpm`) or tokens (`tpm`), per minute. */
export type RateUnit = 'rpm' | 'tpm';

/**
 * An `rpm` or `tpm` in force for a target: its provider's (all its models
 * share one window) or the chain entry's own (that target counts alone).
 */
export interface RateLimit {
  /** The window it shares: `<unit>:provider:<name>` or `<unit>:target:<id>`. */
  readonly key: string;
  readonly unit: RateUnit;
  readonly kind: 'provider' | 'target';
  readonly name: string;
  /** The configured total per minute (a replica's share of it: RouterOptions.capacityShare). */
  readonly limit: number;
}

/** One member of an alias chain. */
export interface TargetConfig {
  /** `provider/model`, e.g. `openrouter/anthropic/claude-3.5-haiku`. */
  readonly id: string;
  readonly provider: string;
  readonly model: string;
  /** Relative weight for the `weighted` strategy (default 1). */
  readonly weight: number;
  /**
   * Tokens this target's context holds: `settings.contextWindow`, or for an
   * Ollama target the `num_ctx` the gateway sends (see config/context-window.ts).
   * Undefined: unknown, so the request is never checked against it.
   */
  readonly contextWindow: number | undefined;
  /** Effective settings: defaults ← provider ← alias ← target. */
  readonly settings: Settings;
  /** The target's own `price`, else its provider's; undefined: cost unknown. */
  readonly price: Price | undefined;
  /** The chain entry's own `max_concurrency`, else its provider's; undefined: unlimited. */
  readonly concurrency?: ConcurrencyLimit | undefined;
  /** Its `rpm` and `tpm`, each the chain entry's own, else its provider's; undefined: neither applies. */
  readonly rates?: readonly RateLimit[] | undefined;
}

/** What an alias serves: `chat` (`/v1/chat/completions`, the default) or `embedding` (`/v1/embeddings`). */
export type AliasKind = 'chat' | 'embedding';

export interface AliasConfig {
  readonly name: string;
  readonly description: string;
  readonly kind: AliasKind;
  /**
   * `embedding` aliases: the one vector space every target serves (the loader
   * refuses targets that differ). Undefined for chat aliases and for a direct
   * `provider/model` target, which declares none.
   */
  readonly embeddingSpace: string | undefined;
  /**
   * `embedding` aliases: the most inputs one request may carry — the smallest
   * `max_batch` any target states (so failover never meets a target that cannot
   * take the batch); undefined when no target states one.
   */
  readonly maxBatch: number | undefined;
  readonly strategy: Strategy;
  readonly onAllUnhealthy: OnAllUnhealthy;
  /** Count a 200 with no content and no tool calls as a failure and fail over (default true). */
  readonly failOverOnEmpty: boolean;
  /** Answers that fail over although the upstream said 200 (`fail_over_on`; default `empty` only). */
  readonly failOverOn: ReadonlySet<AnswerCheck>;
  /** An upstream "context length exceeded" 4xx fails over to the next target (default true). */
  readonly failOverOnContextLength: boolean;
  /** `hedge_background`: background requests hedge too (`hedge_after`); default false, only realtime ones do. */
  readonly hedgeBackground: boolean;
  readonly chain: readonly TargetConfig[];
}

/**
 * A 200 answer that is still no use, checked when the alias lists it in `fail_over_on`:
 * `empty` no content and no tool calls; `content_filter` finish_reason content_filter;
 * `refusal` a non-null `message.refusal`; `invalid_json` content that does not parse
 * (or validate against the request's `json_schema`) when `response_format` asked for JSON.
 */
export type AnswerCheck = 'empty' | 'content_filter' | 'refusal' | 'invalid_json';

/** A fully validated, immutable config. Swapped by reference on reload. */
export interface ConfigSnapshot {
  /** Where it was loaded from (a path, or a name given by the caller). */
  readonly source: string;
  readonly loadedAt: number;
  readonly settings: Settings;
  readonly providers: ReadonlyMap<string, ProviderConfig>;
  readonly aliases: ReadonlyMap<string, AliasConfig>;
  /** Concurrency limit for `background` requests (default 2). */
  readonly backgroundConcurrency: number;
  /** `usage_retention`: how long the gateway keeps usage records; undefined = its default (30 days) or its flag. */
  readonly usageRetentionMs?: number;
}

/** An OpenAI chat completion request body, passed through as-is apart from `model`. */
export type ChatRequestBody = Record<string, unknown> & {
  model?: string;
  messages: unknown[];
  stream?: boolean;
};

/** An OpenAI embeddings request body (`input`, `encoding_format`, `dimensions`, …), passed through apart from `model`. */
export type EmbeddingRequestBody = Record<string, unknown> & {
  model?: string;
  /** A string, an array of strings, an array of tokens, or an array of token arrays. */
  input: string | readonly string[] | readonly number[] | readonly (readonly number[])[];
  encoding_format?: 'float' | 'base64';
  dimensions?: number;
};

/** A listener on a `CancelSignal`: a function or an `EventListenerObject`-style object. */
export type CancelListener = ((event: Event) => void) | { handleEvent(event: Event): void };

/**
 * What the router needs from a caller's cancellation signal: a standard
 * `AbortSignal` satisfies it, and so does a lighter object that implements just
 * these members. The router only reads `aborted` / `reason` and hooks `abort`
 * listeners; it never hands the caller's signal to `fetch`, `AbortSignal.any`
 * or a Node API that needs a real `AbortSignal`.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  /** Why it aborted; used as the abort reason passed on to the upstream request. */
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: CancelListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: CancelListener): void;
}

/**
 * What the request asks for. `chat` (the default) takes a `ChatRequestBody`;
 * `embedding` an `EmbeddingRequestBody`, never streams, and needs an alias of
 * `kind: embedding` (or a direct `provider/model`).
 */
export type Operation = AliasKind;

/**
 * The JSON text a request body was parsed from, with the span of its one
 * top-level `model` string value (quotes included, `modelEnd` exclusive).
 * Adapters that pass the caller's body through (OpenAI-compatible) send this
 * text with only that value replaced, instead of serialising the body again
 * (~20 µs for a 10 kB prompt, and the client's own bytes reach the upstream).
 * The caller vouches that `JSON.parse(text)` is the request's `body` and that
 * no other top-level member is named `model`.
 */
export interface BodyText {
  readonly text: string;
  readonly modelStart: number;
  readonly modelEnd: number;
}

/**
 * A provider protocol (ProviderType) other than the router's own (OpenAI's)
 * that a request can already be written in: Anthropic's Messages. A target of
 * that protocol can take such a request as written (OriginalRequest), so it
 * is a protocol the router knows natively, not only by translation.
 */
export type NativeProtocol = Extract<ProviderType, 'anthropic'>;

/**
 * The protocol a result's body or stream events are written in: `openai` (the
 * router's own shape: `chat.completion`, `chat.completion.chunk`), or the
 * request's native protocol when a target of that protocol took the request
 * as written and answered it untranslated (see OriginalRequest). Only a
 * request with an `original` ever gets a result in a native protocol.
 */
export type ResultProtocol = Extract<ProviderType, 'openai'> | NativeProtocol;

/**
 * The client's request as written, when it is written in another protocol
 * than the router's own (OpenAI's): `body` of the RouterRequest is its
 * translation, and this is the request itself, for a target of `protocol`.
 * The translation drops what OpenAI-shaped targets cannot take (Anthropic's
 * `thinking`, `cache_control`); the original keeps it. A target of that
 * protocol (`anthropic`) gets the original with only `model` replaced, and
 * its answer comes back untranslated (`protocol` of the result); the other
 * targets of the chain get the translation.
 */
export interface OriginalRequest {
  /** The provider protocol the request is written in. */
  readonly protocol: NativeProtocol;
  /** The parsed body, as the client wrote it. */
  readonly body: Record<string, unknown>;
  /** Its text with the span of `model` (see BodyText), when it has a top-level `model`. */
  readonly bodyText: BodyText | undefined;
}

/** One part of a request that only a target taking it natively can honour (RouterRequest.nativeOnly). */
export interface NativeOnlyPart {
  /** Where the client wrote it, as an error's `param` names it: `tools[0].type`, `messages[1].content[0].type`. */
  readonly param: string;
  /** Its type as the client wrote it (`web_search_20250305`, `image_generation`, `web_search_tool_result`): what messages and X-Mana-LLM-Dropped-Tools name. */
  readonly name: string;
  /**
   * A hosted (server-side) tool the request merely offers: `hosted_tools: drop`
   * may leave it out. False for one the model cannot do without (a tool the
   * request's `tool_choice` forces, a tool the client runs from a schema only
   * the upstream knows).
   */
  readonly droppable: boolean;
}

/** Request headers by lower-case name, as Node's `IncomingHttpHeaders` holds them. */
export type ClientHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface RouterRequest {
  /** Alias, direct `provider/model`, or undefined for DEFAULT_ALIAS. */
  readonly model: string | undefined;
  /** Default `chat`. */
  readonly operation?: Operation;
  readonly body: ChatRequestBody | EmbeddingRequestBody;
  /** `body` as the client wrote it, when the caller has it (see `BodyText`). */
  readonly bodyText?: BodyText | undefined;
  /** The client's request as written, when `body` translates it from another protocol (see OriginalRequest). */
  readonly original?: OriginalRequest | undefined;
  readonly stream: boolean;
  readonly priority?: Priority;
  /** Aborting cancels the upstream request at once. Any `CancelSignal`; a standard `AbortSignal` is one. */
  readonly signal?: CancelSignal;
  /** Correlates attempt events with the caller's request (e.g. X-Request-Id). */
  readonly requestId?: string;
  /**
   * Who is asking (a service key's id, a client's address): work the router
   * shares between requests (its schema workers) is shared fairly between
   * callers by this name. Requests without one share one anonymous caller.
   */
  readonly caller?: string | undefined;
  /**
   * The client's request headers as they came (e.g. Node's `req.headers`, not
   * copied): a target's protocol passes on the few it takes from a client as
   * they came (Anthropic's `anthropic-beta`), and no other header leaves. The
   * caller needs to know no protocol's header names.
   */
  readonly clientHeaders?: ClientHeaders | undefined;
  /**
   * Chat body parameters that are hints, not requirements: a target whose
   * protocol cannot honour one gets the request without it (the attempt's
   * `detail` says so) instead of being skipped. A Responses request's
   * `reasoning_effort` is one (Codex sends it by default, and an answer
   * without the effort asked for is still the answer). Without this, every
   * parameter a protocol cannot honour skips the target.
   */
  readonly optionalParameters?: readonly string[] | undefined;
  /**
   * What `body` (the translation) leaves out because only a target that takes
   * the client's request as written (`original`, in its own protocol) can honour it:
   * Anthropic's server tools (and their calls and results in the
   * conversation, a document), OpenAI's hosted tools of its Responses
   * protocol. Any other target is skipped as `unsupported_parameter`
   * naming the first one, unless every one is droppable and the target's
   * `hosted_tools` setting is `drop`: it then gets `body` as it is.
   */
  readonly nativeOnly?: readonly NativeOnlyPart[] | undefined;
  /** Told of this request's attempts while they happen (the gateway's traces); without one nothing is built for it. */
  readonly observer?: AttemptObserver | undefined;
}

export type AttemptOutcome = 'ok' | 'skipped' | 'failed' | 'rejected' | 'aborted' | 'cancelled';

/**
 * How `hedge_after` went for one request (absent: it was not in force):
 * `not_needed` the attempt in flight answered (or failed) before it; `won` a
 * hedge was started and answered first; `lost` a hedge was started and the
 * attempt it raced answered first; `failed` a hedge was started and neither
 * answered (the chain went on); `unavailable` no other target could be called
 * at once, so none was started.
 */
export type HedgeOutcome = 'not_needed' | 'won' | 'lost' | 'failed' | 'unavailable';

/**
 * One planned target and what happened to it. `reason` says why, in the terms
 * of attempt/attempt-reasons.ts (the one list): skipped (no upstream call) →
 * `SKIP_REASONS` or `unconfigured: <why>`; failed → `FAILURE_REASONS` or
 * `http_<status>`; rejected (4xx relayed, no failover) → `http_<status>`;
 * ok → `ok`; aborted → `aborted`; cancelled (a hedge race's loser, its
 * upstream request closed) → `CANCEL_REASONS`.
 */
export interface Attempt {
  readonly target: string;
  readonly provider: string;
  readonly model: string;
  readonly outcome: AttemptOutcome;
  readonly reason: AttemptReason;
  readonly status?: number;
  readonly durationMs: number;
  /** True when the router moved on to another target after this one. */
  readonly failedOver: boolean;
  /** Human-readable detail without secrets, e.g. `503 Service Unavailable`. */
  readonly detail?: string;
  /** The configured price of this call (target's, else provider's); absent: cost unknown. */
  readonly price?: Price;
  /**
   * Tokens a failed call's answer reported (one judged empty, a refusal or
   * invalid JSON by `fail_over_on`): the upstream billed them though the client
   * never saw the answer. Absent on other failures and on the answering call
   * (its usage is the result's).
   */
  readonly usage?: Usage;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of the prompt tokens, those served from the upstream's cache (`prompt_tokens_details.cached_tokens`), when reported. */
  cached_tokens?: number;
  /** Of the completion tokens, those the model spent reasoning (`completion_tokens_details.reasoning_tokens`), when reported. */
  reasoning_tokens?: number;
}

/**
 * What happened to one request, as data: the one description that crosses from
 * the router to its caller, on a result (`result.outcome`) and on a RouterError
 * (`error.outcome`) alike. A caller writes its records (headers, log line,
 * metrics) from it and counts nothing itself.
 */
export interface RequestOutcome {
  /** The alias the request resolved to; undefined for a direct `provider/model` or an unknown model. */
  readonly alias: string | undefined;
  /** `provider/model` of the target that answered, rejected or broke off; undefined when none did. */
  readonly target: string | undefined;
  readonly attempts: readonly Attempt[];
  /** Upstream calls made: every attempt but a skip (a skip never reaches the network). Counted here only. */
  readonly upstreamCalls: number;
  /** For `no_healthy_provider`: whole seconds until the soonest target may recover, clamped to 1 s … 1 h. */
  readonly retryAfterSeconds: number | undefined;
  /** How `hedge_after` went (HedgeOutcome); absent when it was not in force for this request. */
  readonly hedge?: HedgeOutcome;
}

/** What every result carries, whatever its kind. */
export interface ResultBase {
  /** `outcome.target` is the target that answered (or rejected). */
  readonly outcome: RequestOutcome & { readonly target: string };
  /** Rate-limit headers (`x-ratelimit-*`, `retry-after`) of the relayed attempt only. */
  readonly headers: Readonly<Record<string, string>>;
  /** The hosted tools (NativeOnlyPart.name) the target that answered got the request without (`hosted_tools: drop`); absent: none. */
  readonly droppedTools?: readonly string[];
}

/** A non-streaming success: an OpenAI `chat.completion` object, or for embeddings an OpenAI embedding `list`. */
export interface JsonResult extends ResultBase {
  readonly kind: 'json';
  readonly status: number;
  /** The protocol `body` and `text` are written in: `openai` (a `chat.completion`), or a native answer's (an Anthropic `message`). */
  readonly protocol: ResultProtocol;
  readonly body: Record<string, unknown>;
  /**
   * `body` as the upstream wrote it, when that is exactly what `body` holds: send
   * this rather than re-serialising `body` (the same JSON, without a second pass over
   * it). Undefined when the router built or changed the answer (Ollama, re-encoded vectors).
   */
  readonly text?: string | undefined;
  readonly usage: Usage | undefined;
  /** Embeddings through an alias: the vector space that answered (the alias's `embedding_space`). */
  readonly embeddingSpace?: string | undefined;
}

/**
 * A committed stream: the first content delta has arrived, so the router can no
 * longer change target. `events` yields the JSON text of each
 * `chat.completion.chunk` (without `data: ` framing or `[DONE]`), or of each
 * native event (see `protocol`). If the upstream
 * fails after the commit, iteration throws a RouterError with code
 * `stream_interrupted`; the caller must end its stream with an error event.
 */
export interface StreamResult extends ResultBase {
  readonly kind: 'stream';
  /**
   * The protocol `events` are written in: `openai` (each a `chat.completion.chunk`), or a
   * native stream's: for `anthropic`, each event is the JSON `data` of one
   * of Anthropic's stream events as the upstream sent it (its `type` names the
   * event), `message_stop` included.
   */
  readonly protocol: ResultProtocol;
  readonly events: AsyncIterable<string>;
  /** Filled in as the stream progresses (final when iteration ends). */
  readonly usage: Usage | undefined;
  /** Upstream events skipped so far because they could not be parsed (the stream went on without them); absent is none. */
  readonly skippedEvents?: number;
}

/** An upstream request error (400, 413, 422, …) relayed as-is: every target would reject it alike. */
export interface UpstreamErrorResult extends ResultBase {
  readonly kind: 'upstream_error';
  readonly status: number;
  /** The upstream body, verbatim. */
  readonly body: string;
  readonly contentType: string | undefined;
}

export type RouterResult = JsonResult | StreamResult | UpstreamErrorResult;

/** Per-provider health as the cache knows it (no secrets). */
export interface ProviderHealthView {
  readonly provider: string;
  readonly type: ProviderType;
  readonly configured: boolean;
  readonly unconfiguredReason: string | undefined;
  /** `null`: configured but not known yet (no probe or call has completed since start or since its endpoint changed). */
  readonly healthy: boolean | null;
  readonly lastCheck: string | null; // ISO time
  readonly consecutiveFailures: number;
  readonly unhealthyUntil: string | null; // ISO time
  readonly lastError: string | null;
}

export type TargetState = 'healthy' | 'unhealthy' | 'cooling_down' | 'unconfigured' | 'model_missing';

export interface TargetView {
  readonly target: string;
  readonly provider: string;
  readonly model: string;
  readonly weight: number;
  readonly state: TargetState;
  /** For `unhealthy` / `cooling_down`: ISO time the target is tried again. */
  readonly until: string | null;
  /** For `unconfigured`: why (e.g. `missing api key (GROQ_API_KEY)`). */
  readonly reason: string | null;
  /** Its `max_concurrency` now; absent when it declares none. */
  readonly load?: TargetLoadView;
  /** Its `rpm` / `tpm` windows now, one per limit in force; absent when neither applies. */
  readonly rate?: readonly TargetRateView[];
}

/** One of a target's rate windows now (the last minute, sliding). */
export interface TargetRateView {
  readonly unit: RateUnit;
  /** What the window covers: `provider` (all its models) or the `target` alone. */
  readonly counts: 'provider' | 'target';
  /** Requests (rpm) or tokens (tpm) charged in the last minute. */
  readonly used: number;
  /** The effective local limit (a replica's share of the configured total). */
  readonly limit: number;
  /** Requests waiting for room in the window. */
  readonly queued: number;
  /** Used up: a request arriving now would not fit (rpm), or not even one token would (tpm). */
  readonly saturated: boolean;
}

/** A target's `max_concurrency` count now (`saturated`: at its limit, so a realtime request passes it by). */
export interface TargetLoadView {
  /** What the count covers: `provider` (all its models) or the `target` alone. */
  readonly counts: 'provider' | 'target';
  readonly inFlight: number;
  /** The effective local limit (a replica's share of the configured total). */
  readonly limit: number;
  readonly queued: number;
  readonly saturated: boolean;
}

export interface AliasView {
  readonly alias: string;
  readonly description: string;
  readonly kind: AliasKind;
  /** `embedding` aliases only. */
  readonly embeddingSpace: string | undefined;
  readonly maxBatch: number | undefined;
  readonly strategy: Strategy;
  readonly chain: readonly TargetView[];
}

/** Emitted after every attempt (including skips) of every request. */
export interface AttemptEvent {
  readonly requestId: string | undefined;
  readonly alias: string | undefined;
  readonly attempt: Attempt;
  /** For a failed-over attempt: the target tried next, if any. */
  readonly nextTarget: string | undefined;
}

/**
 * What a caller learns of one request's attempts while they happen, beyond the
 * outcome it gets at the end (`RequestOutcome`, the same Attempt objects): when
 * each upstream call starts and ends, what its answer said of itself, when a
 * stream committed and ended, and a chance to add headers to one call. The
 * gateway turns these into trace spans; the router knows nothing of tracing.
 * Called synchronously where things happen: an observer must only note them.
 */
export interface AttemptObserver {
  /** An upstream call starts now (a retry of a target is another call). What it returns follows that call. */
  callStarted(call: UpstreamCall): CallObserver;
  /** A target was skipped without a call (health, context window, a parameter its protocol cannot honour). */
  skipped(attempt: Attempt): void;
}

/** The upstream call about to start. */
export interface UpstreamCall {
  /** `provider/model`. */
  readonly target: string;
  readonly provider: string;
  readonly providerType: ProviderType;
  /** The model asked of the upstream. */
  readonly model: string;
  /** Host and port of the provider's `base_url` (nothing else of it: its query may hold a secret). */
  readonly serverAddress: string;
  readonly serverPort: number;
}

/** One upstream call, as its observer hears of it. */
export interface CallObserver {
  /**
   * Headers to add to this call's upstream request (a W3C `traceparent`). Sent only
   * to a provider with `propagateTrace`; never replace a header the call sets itself.
   */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /**
   * The call is over (for a stream: it committed, its first content delta arrived)
   * and recorded as `attempt`. `answer`: what the answer said of itself, when there
   * was one. Whether the router moves on after it is known at `published`.
   */
  ended(attempt: Attempt, answer: AnswerFacts | undefined): void;
  /** The attempt is final: `failedOver` is decided. Always after `ended`. */
  published(attempt: Attempt): void;
  /** The call's committed stream ended, after `published`: how, and what its events said. Only for a call that committed a stream. */
  streamEnded(summary: StreamSummary): void;
}

/** What an upstream answer says of itself (none of its content). */
export interface AnswerFacts {
  /** The answer's own id (`chatcmpl-…`, `msg_…`), when it has one. */
  readonly id: string | undefined;
  /** The model that answered, as the upstream names it. */
  readonly model: string | undefined;
  /** Each choice's finish reason in OpenAI's terms (`stop`, `length`, `tool_calls`, `content_filter`), whatever the protocol; empty for a stream until it ends. */
  readonly finishReasons: readonly string[];
  /** The tokens the answer reports (a JSON answer's; a stream's are in its StreamSummary). */
  readonly usage: Usage | undefined;
}

/** How a committed stream ended, and what its events said. */
export interface StreamSummary {
  /** `complete`: read to its end; `cancelled`: the consumer stopped reading; `aborted`: the request's signal; `interrupted`: it broke off. */
  readonly end: 'complete' | 'cancelled' | 'aborted' | 'interrupted';
  /** Why it broke off (`interrupted` only): `socket_closed`, `stream_error`, … */
  readonly reason: string | undefined;
  readonly finishReasons: readonly string[];
  readonly usage: Usage | undefined;
}

/** Emitted when a provider's health flips. */
export interface HealthChangeEvent {
  readonly provider: string;
  readonly healthy: boolean;
  readonly reason: string | null;
  readonly at: number;
}

/**
 * A change of what the health cache knows, as it crosses to other replicas:
 * a provider's breaker opened (until when, why) or closed again, or a target
 * was put into cooldown. Times are epoch ms. Emitted for local changes only,
 * never for one applied from elsewhere (so a replica never re-announces what
 * it received).
 */
export type HealthTransition =
  | { readonly kind: 'provider_unhealthy'; readonly subject: string; readonly until: number; readonly reason: string; readonly at: number }
  | { readonly kind: 'provider_healthy'; readonly subject: string; readonly at: number }
  | { readonly kind: 'cooldown'; readonly subject: string; readonly until: number; readonly reason: string; readonly at: number };

export interface ReloadEvent {
  readonly ok: boolean;
  readonly source: string;
  readonly error: string | undefined;
}

export interface RouterEvents {
  attempt: AttemptEvent;
  health: HealthChangeEvent;
  reload: ReloadEvent;
}

export type ReloadResult = { ok: true; source: string } | { ok: false; source: string; error: string };
