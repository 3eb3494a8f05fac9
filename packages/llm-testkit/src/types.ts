import type { FakeQuota } from './quota.js';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * A tool call the fake answers with. OpenAI-shaped; `arguments` may be a JSON string
 * (OpenAI wire form) or an object (Ollama wire form) — each fake converts to its own form.
 */
export interface ToolCall {
  id?: string;
  type?: 'function';
  function: { name: string; arguments: string | Record<string, unknown> };
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Addition, Anthropic only: prompt tokens read from the cache (`cache_read_input_tokens`), reported beside `prompt_tokens` (then the uncached `input_tokens`). */
  cache_read_tokens?: number;
  /** Addition, Anthropic only: prompt tokens written to the cache (`cache_creation_input_tokens`), reported beside `prompt_tokens`. */
  cache_creation_tokens?: number;
}

/** Addition: how an `answer` to an embeddings request (`/v1/embeddings`, `/api/embed`) looks. */
export interface EmbeddingAnswer {
  /** Floats per vector (default: the request's `dimensions`, else 8). */
  dimensions?: number;
  /** Fault: answer this many vectors whatever the input count. */
  count?: number;
  /** Fault: the last vector (of two or more) has one float fewer. */
  mixedDimensions?: boolean;
  /** Default: ceil(JSON length / 4) per input. */
  promptTokens?: number;
}

export interface AnswerBehavior {
  kind: 'answer';
  /** Addition: the shape of the answer to an embeddings request (chat requests ignore it). */
  embedding?: EmbeddingAnswer;
  /** Default: `Hello from <model>` (plus ` via <name>` when the fake has a name); no text when toolCalls are given. */
  content?: string;
  toolCalls?: ToolCall[];
  /** Default: prompt 10, completion = ceil(content length / 4). */
  usage?: FakeUsage;
  /** Addition, OpenAI only: the model declines; `message.refusal` carries this text (content null), a stream sends `refusal` deltas. */
  refusal?: string;
  /** Addition: finish_reason (OpenAI) / done_reason (Ollama). Default: OpenAI `tool_calls` with tool calls else `stop`; Ollama `stop`. */
  finishReason?: string;
  /** Addition: the stop sequence that ended the answer (Anthropic: `stop_sequence`, with `finishReason: 'stop_sequence'`; OpenAI: vLLM's `stop_reason` on the choice). */
  stopSequence?: string;
  /** When the request streams, split content into N chunks (default 3). */
  chunks?: number;
  /** Pause between chunks (default 0: the whole stream goes out in one write). */
  chunkIntervalMs?: number;
  /** Wait before sending status + headers. */
  headerDelayMs?: number;
  /** Extra response headers (e.g. x-ratelimit-remaining-requests). */
  headers?: Record<string, string>;
  /** Stream only: close the socket after N chunks, with no terminator ([DONE] / done:true). */
  cutAfterChunks?: number;
  /** Addition (hostile upstream), stream only: one event that is not JSON after N chunks, then the rest of the stream as usual. */
  badEventAfterChunks?: number;
  /** Stream only: send an error event after N chunks (0 = before the first delta), then end cleanly. */
  errorEventAfterChunks?: number;
  /**
   * Addition, Anthropic only: a `thinking` block before the text (a stream sends it as one more chunk, first).
   * Anthropic's `finishReason` is its `stop_reason`: default `tool_use` with tool calls, `refusal` with a refusal, else `end_turn`.
   */
  thinking?: string;
}

export type FakeBehavior =
  | AnswerBehavior
  /** 4xx/5xx/429. Default body: the dialect's error JSON. Headers e.g. `retry-after`. */
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Accept the request and never answer (until the client closes or the fake stops). */
  | { kind: 'hang' }
  /** 200 with empty content and no tool calls; stream: role chunk, finish, [DONE]. */
  | { kind: 'empty_answer' }
  /** Stream: headers then the terminator with no chunks. Non-stream: same as empty_answer. */
  | { kind: 'empty_stream' }
  /** 200 with a body that is not JSON (stream: a `data: {not json` line). */
  | { kind: 'malformed_json' }
  /** Accept the request, then destroy the socket without any response. */
  | { kind: 'destroy' }
  /**
   * Addition (abusive upstream): a body of `bytes` bytes, generated as it is sent (with backpressure,
   * never held whole). `status` 200 (default): an answer whose content is `bytes` of padding
   * (stream or not, a plain JSON body); another status: an error JSON whose message is the padding.
   */
  | { kind: 'huge_body'; bytes: number; status?: number }
  /**
   * Addition (abusive upstream), streams: the head, then chunks that carry only the role
   * (never a content delta) without end, as fast as the client reads, until it closes.
   */
  | { kind: 'endless_role_chunks' }
  /**
   * Addition (abusive upstream), streams: the head, then one event whose line never ends
   * (`data: {"choices":[{"delta":{"content":"aaaa…` with no newline), until the client closes.
   */
  | { kind: 'endless_line' };

export type FakeBehaviorKind = FakeBehavior['kind'];

/** Addition: a behaviour chosen per request from its parsed body (e.g. a scripted agent loop). */
export type FakeScript = (body: unknown) => FakeBehavior;

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** The query string with its `?` (`?api-version=1`), or `''`. */
  query: string;
  /** As received; includes `authorization` so tests can check the key was sent. Never printed by the testkit. */
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or the raw string when the body is not JSON (undefined when empty). */
  body: unknown;
  model: string | undefined;
  /** Addition: `embed` for an embeddings request (`/v1/embeddings`, `/api/embed`), else `chat`. */
  operation: 'chat' | 'embed';
  /** Addition: whether the fake treated the request as streaming (Ollama: `stream` absent = true). */
  stream: boolean;
  /** Addition: the behaviour chosen for this request (undefined for probes). */
  behavior?: FakeBehavior;
  /** Date.now() when the body had been read. */
  at: number;
  /** True when the client closed the connection before the response ended. */
  closedByClient: boolean;
  closedAt?: number;
}

export interface FakeUpstreamOptions {
  host?: string;
  port?: number;
  /** Models listed by the probe endpoint, in addition to those given an `on()`. */
  models?: string[];
  /** Behaviour for requests with no matching `on()` (default: a plain answer). */
  default?: FakeBehavior;
  /** Addition: appended to the default content (`Hello from <model> via <name>`) to tell fakes apart. */
  name?: string;
  /**
   * Addition: a request quota like a cloud account's (e.g. `{ requests: 5 }`: 5 per minute).
   * Past it, chat and embeddings requests are answered 429 with Retry-After (counted by
   * `quotaRefusals()`); probes are not counted. Default: no quota.
   */
  quota?: FakeQuota;
  /** Addition: keep RecordedRequest objects (default true). Counts and waiters work either way; false keeps memory flat in benchmarks. */
  record?: boolean;
}

export interface FakeUpstream {
  readonly kind: 'openai' | 'ollama' | 'anthropic';
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** openai: `${url}/v1`; ollama and anthropic: url (Anthropic's clients append `/v1/messages`) */
  readonly baseUrl: string;
  readonly port: number;
  /** Chat and embeddings requests, oldest first (`operation` tells them apart). */
  readonly requests: RecordedRequest[];
  /** Addition: probe requests (GET models / tags), oldest first. */
  readonly probes: RecordedRequest[];
  /** Behaviour for a model ('*' = any). An array is consumed one per request, the last one repeats; a script chooses per request. */
  on(model: string, behavior: FakeBehavior | FakeBehavior[] | FakeScript): void;
  setModels(models: string[]): void;
  /** Probes answer this status (an error body unless 200). 200 restores normal listings. */
  setProbeStatus(status: number): void;
  count(model?: string): number;
  probeCount(): number;
  /** The oldest matching request not handed out by an earlier call; otherwise waits for the next one. */
  waitForRequest(predicate?: (request: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>;
  /**
   * The oldest client-closed request (matching `predicate`, an addition) not handed out by an
   * earlier call; otherwise waits for the next one. Closes nobody waited for stay queued until
   * reset(), so pass a predicate when earlier requests may also have been abandoned.
   */
  waitForClientClose(timeoutMs?: number, predicate?: (request: RecordedRequest) => boolean): Promise<RecordedRequest>;
  /** Addition: requests answered 429 because the `quota` option was used up (0 without a quota). */
  quotaRefusals(): number;
  openConnections(): number;
  /** Forget requests, probes, behaviours, models set by setModels and the probe status. */
  reset(): void;
  /** Stop listening and drop every connection (like a crashed process); the port is kept. */
  stop(): Promise<void>;
  /** Listen again on the same port. */
  restart(): Promise<void>;
  /** Stop for good: destroy sockets, clear timers, reject pending waiters. */
  close(): Promise<void>;
}
