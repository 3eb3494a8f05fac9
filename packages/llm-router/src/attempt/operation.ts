import type { Adapter, AdapterCall, AdapterResponse } from '../adapters/adapter.js';
import { dimensionsOf, embeddingUsage, firstNonFinite, inputCount, matchEncoding } from '../adapters/embeddings.js';
import { toUsage } from '../adapters/token-usage.js';
import { noAttempts, RouterError } from '../errors.js';
import type { AliasConfig, ChatRequestBody, EmbeddingRequestBody, Operation, RouterRequest, Usage } from '../types.js';
import type { Failure } from './classify-error.js';
import { inspectCompletion, type AnswerChecks } from './inspect-answer.js';
import { isPlainObject } from '../plain-object.js';

/**
 * What differs between a chat completion and an embeddings request inside the
 * ONE attempt loop (execute → call-target → classify): which adapter call a
 * target gets, which requests an alias admits, and which 2xx answers are no
 * answer at all. Plan, health, retries, failover and classification are shared.
 */
export interface OperationSpec {
  readonly kind: Operation;
  /** Refuses, before any planning, a request this alias cannot serve (a RouterError that names the request, not an upstream). */
  admit(request: RouterRequest, config: AliasConfig, alias: string | undefined): void;
  /** One non-streaming adapter call. */
  call(adapter: Adapter, call: AdapterCall<RouterRequest['body']>): Promise<AdapterResponse>;
  /** A 2xx body that is not a usable answer: the failure to fail over with; undefined when fine. */
  invalidAnswer(
    body: Record<string, unknown>,
    request: RouterRequest,
    config: AliasConfig,
    answerChecks: AnswerChecks,
  ): Failure | undefined | Promise<Failure | undefined>;
  /**
   * Puts a usable answer in the shape the caller asked for. True when that changed
   * `body`: the upstream's text then no longer says what it holds and is not relayed.
   */
  conform(body: Record<string, unknown>, request: RouterRequest): boolean;
  usage(body: Record<string, unknown>): Usage | undefined;
}

const CHAT: OperationSpec = {
  kind: 'chat',
  admit(request, _config, alias) {
    if (!isPlainObject(request.body) || !Array.isArray(request.body.messages)) {
      throw new RouterError('invalid_request', 'the request body needs a `messages` array', { outcome: noAttempts(alias) });
    }
  },
  call: (adapter, call) => adapter.complete(call as AdapterCall<ChatRequestBody>),
  // The alias's `fail_over_on` checks (empty, content_filter, refusal, invalid_json): inspect-answer.ts.
  invalidAnswer: (body, _request, _config, answerChecks) => inspectCompletion(body, answerChecks),
  conform: () => false,
  usage: (body) => toUsage(body.usage),
};

const EMBEDDING: OperationSpec = {
  kind: 'embedding',
  admit(request, config, alias) {
    const outcome = noAttempts(alias);
    const input = isPlainObject(request.body) ? (request.body as Partial<EmbeddingRequestBody>).input : undefined;
    if (typeof input !== 'string' && !Array.isArray(input)) {
      throw new RouterError('invalid_request', 'the request body needs an `input`: a string, an array of strings or token arrays', { outcome });
    }
    if (request.stream) throw new RouterError('invalid_request', 'embeddings do not stream', { outcome });
    const count = inputCount(input);
    if (count === 0) throw new RouterError('invalid_request', '`input` must not be empty', { outcome });
    if (config.maxBatch !== undefined && count > config.maxBatch) {
      throw new RouterError(
        'batch_too_large',
        `${count} inputs in one request exceed ${config.name}'s limit of ${config.maxBatch} (max_batch): split the batch`,
        { outcome, param: 'input' },
      );
    }
  },
  call: (adapter, call) => adapter.embed(call as AdapterCall<EmbeddingRequestBody>),
  invalidAnswer(body, request) {
    const req = request.body as EmbeddingRequestBody;
    const problem = vectorProblem(body.data as Record<string, unknown>[], inputCount(req.input), req.dimensions);
    if (problem !== undefined) return { kind: 'invalid_answer', reason: 'invalid_embeddings', detail: problem };
    return undefined;
  },
  conform: (body, request) => matchEncoding(body, (request.body as EmbeddingRequestBody).encoding_format),
  usage: (body) => embeddingUsage(body.usage),
};

export function operationOf(request: RouterRequest): OperationSpec {
  return request.operation === 'embedding' ? EMBEDDING : CHAT;
}

/**
 * Why a list of vectors cannot be relayed: the wrong count, indexes that are
 * not 0…N-1, a value that is not a finite number, mixed dimensions, or not the
 * dimensions asked for. Relaying it would write misaligned, incomparable or
 * unreadable vectors into the caller's index.
 */
export function vectorProblem(data: readonly Record<string, unknown>[], expected: number, dimensions: number | undefined): string | undefined {
  if (data.length !== expected) return `expected ${expected} vectors, got ${data.length}`;
  const seen = new Set<number>();
  let dims: number | undefined;
  for (let i = 0; i < data.length; i++) {
    const item = data[i]!;
    const index = item.index === undefined ? i : item.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected || seen.has(index)) {
      return `vector indexes are not 0…${expected - 1}`;
    }
    seen.add(index);
    const n = dimensionsOf(item.embedding);
    if (!(n > 0)) return `vector ${index} is empty or malformed`;
    const bad = firstNonFinite(item.embedding);
    if (bad !== undefined) return `vector ${index} holds a value that is not a finite number (element ${bad})`;
    if (dims === undefined) dims = n;
    else if (n !== dims) return `mixed dimensions (${dims} and ${n})`;
  }
  if (dimensions !== undefined && dims !== undefined && dims !== dimensions) return `asked for ${dimensions} dimensions, got ${dims}`;
  return undefined;
}
