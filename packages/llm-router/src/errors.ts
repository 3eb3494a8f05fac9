import type { Attempt } from './types.js';

/**
 * Stable error codes. Callers switch on `code`, never on message text.
 * `status` is the HTTP status a gateway should answer with.
 */
export const ROUTER_ERROR_STATUS = {
  invalid_config: 500,
  unknown_model: 404,
  invalid_request: 400,
  no_healthy_provider: 503,
  upstream_failed: 502,
  stream_interrupted: 502,
  aborted: 499,
  /** `execute()` after `close()`: this router takes no more requests (nothing upstream was asked). */
  router_closed: 503,
} as const;

export type RouterErrorCode = keyof typeof ROUTER_ERROR_STATUS;

export interface RouterErrorOptions {
  cause?: unknown;
  attempts?: readonly Attempt[];
  /** For `no_healthy_provider`: seconds until the soonest target recovers. */
  retryAfterSeconds?: number;
  /** For `unknown_model`: the aliases that do exist. */
  knownAliases?: readonly string[];
  /** For `stream_interrupted`: the target whose stream broke. */
  target?: string;
}

/** The one error type the router throws. Messages never contain secrets. */
export class RouterError extends Error {
  override readonly name = 'RouterError';
  readonly code: RouterErrorCode;
  readonly status: number;
  readonly attempts: readonly Attempt[];
  readonly retryAfterSeconds: number | undefined;
  readonly knownAliases: readonly string[];
  readonly target: string | undefined;

  constructor(code: RouterErrorCode, message: string, options: RouterErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ROUTER_ERROR_STATUS[code];
    this.attempts = options.attempts ?? [];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.knownAliases = options.knownAliases ?? [];
    this.target = options.target;
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
