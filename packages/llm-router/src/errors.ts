import type { AliasKind, RequestOutcome } from './types.js';

/**
 * Stable error codes: what happened, in the router's own terms. The router
 * knows no HTTP; a caller (the gateway) decides, in one table of its own, what
 * its protocol says about each code. Callers switch on `code`, never on text.
 */
export type RouterErrorCode =
  | 'invalid_config'
  | 'unknown_model'
  | 'invalid_request'
  /** A chat alias asked for embeddings, or an embedding alias asked for a chat completion. */
  | 'alias_kind_mismatch'
  /** More embedding inputs in one request than the alias's `max_batch`. */
  | 'batch_too_large'
  /** Every target was skipped because none can honour a request parameter (`param`). */
  | 'unsupported_parameter'
  /** Every target was skipped because none can express the request (e.g. a remote image for Ollama). */
  | 'unsupported_request'
  | 'no_healthy_provider'
  | 'upstream_failed'
  | 'stream_interrupted'
  | 'aborted'
  /** No target's context window holds the request (estimated, or said so by every upstream asked). */
  | 'context_length_exceeded'
  /** `response_format.json_schema.schema` is not a valid JSON Schema (nothing was sent upstream). */
  | 'invalid_schema'
  /** `response_format.json_schema.schema` is past the size an alias that checks answers compiles (`param`: `response_format`). */
  | 'schema_too_large'
  /** The caller's queue of schema jobs, or everyone's, is at its bound (nothing was sent upstream; `retryAfterSeconds` set). */
  | 'schema_checks_busy'
  /** `execute()` after `close()`: this router takes no more requests (nothing upstream was asked). */
  | 'router_closed';

export interface RouterErrorOptions {
  cause?: unknown;
  /** What the request got to before it ended; empty when it ended before any attempt. */
  outcome?: RequestOutcome;
  /** For `unknown_model`: the aliases that do exist; for `alias_kind_mismatch`: those of the kind asked for. */
  knownAliases?: readonly string[];
  /** The request parameter at fault: for `unsupported_parameter`, the one no target can honour; `model` for `alias_kind_mismatch`; `input` for `batch_too_large`. */
  param?: string;
  /** For `alias_kind_mismatch`: the kind of the alias named, so a caller can say where that kind is served. */
  aliasKind?: AliasKind;
}

/** The outcome of a request that ended before its first attempt. */
export function noAttempts(alias: string | undefined = undefined): RequestOutcome {
  return { alias, target: undefined, attempts: [], upstreamCalls: 0, retryAfterSeconds: undefined };
}

/** The one error type the router throws. Messages never contain secrets. */
export class RouterError extends Error {
  override readonly name = 'RouterError';
  readonly code: RouterErrorCode;
  readonly outcome: RequestOutcome;
  readonly knownAliases: readonly string[];
  readonly param: string | undefined;
  readonly aliasKind: AliasKind | undefined;

  constructor(code: RouterErrorCode, message: string, options: RouterErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.outcome = options.outcome ?? noAttempts();
    this.knownAliases = options.knownAliases ?? [];
    this.param = options.param;
    this.aliasKind = options.aliasKind;
  }
}

/** The error every abort by the caller ends in, wherever in the request it is noticed. */
export function abortedError(options?: RouterErrorOptions): RouterError {
  return new RouterError('aborted', 'request aborted by the caller', options);
}

/** Type guard that works across package copies (no `instanceof`). */
export function isRouterError(value: unknown): value is RouterError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { name?: unknown }).name === 'RouterError' &&
    typeof (value as { code?: unknown }).code === 'string'
  );
}
