import { STATUS_CODES } from 'node:http';
import type { HttpFailure } from '../adapters/adapter.js';
import type { AnswerCheck, Settings } from '../types.js';
import type { AttemptReason, HttpStatusReason } from './attempt-reasons.js';
import { saysContextExceeded } from './context-length-body.js';

/**
 * The ONE place that decides what a failed attempt means: fail over to the next
 * target, or reject (relay the upstream's answer, because every target would
 * reject the same request alike). It also says which health bookkeeping the
 * failure deserves; the attempt loop only carries the decision out.
 */

/** What went wrong with one attempt, before interpretation. */
export type Failure =
  | { readonly kind: 'error'; readonly error: unknown } // thrown by the adapter / undici
  | { readonly kind: 'http'; readonly response: HttpFailure } // a non-2xx answer
  | { readonly kind: 'empty'; readonly reason: 'empty_response' | 'empty_stream' }
  /**
   * A 2xx that cannot or should not be relayed: embeddings of the wrong shape, or a chat answer
   * that is no use by a check the alias lists in `fail_over_on` (see inspect-answer.ts).
   */
  | { readonly kind: 'invalid_answer'; readonly reason: 'invalid_embeddings' | Exclude<AnswerCheck, 'empty'>; readonly detail: string }
  | { readonly kind: 'stream_error'; readonly message: string }; // an error event before the first delta

export interface ClassifyContext {
  /** The target belongs to an alias (a 404 then means "model missing here", not "no such model"). */
  readonly aliasTarget: boolean;
  /** The alias's `fail_over_on_context_length` (false for a direct target: nothing stands behind it). */
  readonly failOverOnContextLength: boolean;
  readonly settings: Settings;
  readonly now: number;
}

export interface Decision {
  readonly action: 'fail_over' | 'reject';
  /** `Attempt.reason`: `connect_refused`, `http_503`, `empty_response`, … */
  readonly reason: AttemptReason;
  readonly status: number | undefined;
  /** Human-readable, secret-free (never echoes upstream bodies). */
  readonly detail: string;
  /** A connection-level failure: counts against the provider's breaker. */
  readonly providerFailure: boolean;
  /**
   * No answer in time: this request moves on, but a slow answer (a long
   * generation) is no evidence that the provider is down, so instead of
   * counting a failure the provider is probed at once and the probe decides.
   */
  readonly probeProvider: boolean;
  /** Cool this target (provider+model) down until then (epoch ms). */
  readonly coolDownUntil: number | undefined;
  /** The upstream's `Retry-After`, in ms from now. */
  readonly retryAfterMs: number | undefined;
  /** Whether retrying the same target could help (configured `retries`). */
  readonly retryable: boolean;
  /** Whether the attempt reached the network (counts as an upstream call). */
  readonly reachedNetwork: boolean;
}

/** Node / undici error codes of connection-level failures → attempt reason + detail. */
const NETWORK_CODES: ReadonlyMap<string, readonly [reason: AttemptReason, detail: string]> = new Map([
  ['ECONNREFUSED', ['connect_refused', 'connection refused']],
  ['ECONNRESET', ['connect_reset', 'connection reset']],
  ['EPIPE', ['connect_reset', 'connection reset (broken pipe)']],
  ['ENOTFOUND', ['dns', 'DNS lookup failed']],
  ['EAI_AGAIN', ['dns', 'DNS lookup failed (temporary)']],
  ['EHOSTUNREACH', ['connect_refused', 'host unreachable']],
  ['ENETUNREACH', ['connect_refused', 'network unreachable']],
  ['ETIMEDOUT', ['connect_timeout', 'connect timeout']],
  ['UND_ERR_CONNECT_TIMEOUT', ['connect_timeout', 'connect timeout']],
  ['first_byte_timeout', ['first_byte_timeout', 'first-byte timeout (nothing within first_byte_timeout)']], // attempt/first-byte-timer.ts
  ['UND_ERR_HEADERS_TIMEOUT', ['first_byte_timeout', 'first-byte timeout (no response headers)']],
  ['UND_ERR_BODY_TIMEOUT', ['first_byte_timeout', 'timeout waiting for response data']],
  ['UND_ERR_SOCKET', ['socket_closed', 'socket closed before the response completed']],
  ['UND_ERR_CLOSED', ['socket_closed', 'connection closed']],
]);

export function classifyFailure(failure: Failure, ctx: ClassifyContext): Decision {
  switch (failure.kind) {
    case 'http':
      return classifyHttp(failure.response, ctx);
    case 'empty':
      return failOver(failure.reason, failure.reason === 'empty_response' ? 'empty answer' : 'stream ended without content');
    case 'invalid_answer':
      // Another model may well answer the same request properly: not the target's fault, no cooldown.
      return failOver(failure.reason, failure.detail);
    case 'stream_error':
      return failOver('stream_error', 'error event in the stream before the first delta', { retryable: true });
    case 'error':
      return classifyError(failure.error);
  }
}

function classifyError(error: unknown): Decision {
  const code = errorCode(error);
  if (code === 'invalid_response') return failOver('invalid_response', 'upstream sent malformed data');
  // Over a memory bound (adapters/adapter.ts ResponseTooLargeError): the provider is reachable, just answering too much.
  if (code === 'response_too_large') return failOver('response_too_large', messageOf(error));
  if (code === 'unsupported_request') {
    return failOver('unsupported_request', messageOf(error), { reachedNetwork: false });
  }
  const known = code === undefined ? undefined : NETWORK_CODES.get(code);
  // Never retried: a target silent for first_byte_timeout would most likely be silent again, and each retry
  // would add a whole timeout to the user's wait (with retries: 2, three timeouts before the fallback).
  if (known !== undefined && known[0] === 'first_byte_timeout') return failOver(known[0], known[1], { probeProvider: true });
  if (known !== undefined) return failOver(known[0], known[1], { providerFailure: true, retryable: true });
  // Anything else (an unexpected exception) still must not sink the request: try the next target.
  return failOver('upstream_error', code === undefined ? 'upstream call failed' : `upstream call failed (${code})`, {
    providerFailure: true,
    retryable: true,
  });
}

function classifyHttp(res: HttpFailure, ctx: ClassifyContext): Decision {
  const status = res.status;
  const reason: HttpStatusReason = `http_${status}`;
  const detail = `${status} ${STATUS_CODES[status] ?? 'HTTP error'}`;
  // "The prompt does not fit": this target's limit, not the caller's mistake; a larger
  // context behind it may serve. Checked first: Together says it with a 403, old llama.cpp with a 500.
  if (ctx.failOverOnContextLength && isContextStatus(status) && saysContextExceeded(res.body)) {
    return failOver('context_length', `${detail}: context length exceeded`, { status });
  }
  if (status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(res.headers['retry-after'], ctx.now);
    const coolFor = retryAfterMs ?? ctx.settings.rateLimitCooldownMs;
    return failOver(reason, detail, { status, coolDownUntil: ctx.now + coolFor, retryAfterMs, retryable: true });
  }
  // The target, not the request, is unusable: bad key, no quota, model not there.
  if (status === 401 || status === 402 || status === 403 || (status === 404 && ctx.aliasTarget)) {
    return failOver(reason, detail, { status, coolDownUntil: ctx.now + ctx.settings.unhealthyPeriodMs });
  }
  if (status === 408) return failOver(reason, detail, { status, retryable: true });
  if (status < 400) return failOver(reason, `unexpected ${detail}`, { status });
  // 400, 413, 422, …: the request itself is wrong; every target would say the same.
  return {
    action: 'reject',
    reason,
    status,
    detail,
    providerFailure: false,
    probeProvider: false,
    coolDownUntil: undefined,
    retryAfterMs: undefined,
    retryable: false,
    reachedNetwork: true,
  };
}

/**
 * Statuses providers use for "context length exceeded": 400 mostly, Together 403,
 * TGI 422, some proxies 413, and llama.cpp servers before its 400 fix answered 500.
 * A 5xx saying so must not cool the target down: the next, shorter prompt fits.
 */
function isContextStatus(status: number): boolean {
  return status === 400 || status === 403 || status === 413 || status === 422 || status >= 500;
}

function failOver(reason: AttemptReason, detail: string, extra: Partial<Decision> = {}): Decision {
  return {
    action: 'fail_over',
    reason,
    detail,
    status: extra.status,
    providerFailure: extra.providerFailure ?? false,
    probeProvider: extra.probeProvider ?? false,
    coolDownUntil: extra.coolDownUntil,
    retryAfterMs: extra.retryAfterMs,
    retryable: extra.retryable ?? false,
    reachedNetwork: extra.reachedNetwork ?? true,
  };
}

/**
 * The attempt reason of a transport error after a stream committed (it can no
 * longer fail over; the reason only feeds health bookkeeping and the
 * `stream_interrupted` record). Malformed data stays `invalid_response`, a
 * line over `max_stream_event_bytes` stays `response_too_large`, silence past
 * `stream_idle_timeout` stays `stream_idle_timeout`; anything else
 * the body iterator throws means the connection broke off.
 * Only the error's own code counts here, as it always has.
 */
export function classifyStreamBreak(error: unknown): 'invalid_response' | 'response_too_large' | 'stream_idle_timeout' | 'socket_closed' {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'invalid_response' || code === 'response_too_large' || code === 'stream_idle_timeout' ? code : 'socket_closed';
}

/**
 * The longest delay an upstream may impose on us: every time an upstream hands
 * us (today its `Retry-After`, as delay-seconds or an HTTP-date) is clamped to
 * this before it becomes a cooldown, a wait or a header. Why: one answer such
 * as `Retry-After: 10000000000000` would otherwise put a cooldown past the
 * largest valid Date (every later request to the alias threw "Invalid time
 * value") or bench a target for centuries. A provider that really needs longer
 * simply answers 429 again after an hour.
 */
export const MAX_UPSTREAM_DELAY_MS = 3_600_000; // 1 h

/** Clamps a delay an upstream asked for into [0, MAX_UPSTREAM_DELAY_MS]; undefined for anything not a number. */
export function clampUpstreamDelay(ms: number): number | undefined {
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(0, ms), MAX_UPSTREAM_DELAY_MS);
}

/** `Retry-After` delay-seconds (`120`, also `1.5`) — digits only, so `-5` or `NaN` are junk, not a date. */
const DELAY_SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * `Retry-After` as delay-seconds or an HTTP-date → ms from `now`, clamped by
 * `clampUpstreamDelay`; undefined when absent or unparsable (the configured
 * `rate_limit_cooldown` applies then).
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text.length === 0) return undefined;
  if (DELAY_SECONDS.test(text)) return clampUpstreamDelay(Number(text) * 1000);
  // An HTTP-date names its day or month; without a letter Date.parse would read `-5` as the year 2001.
  if (!/[a-z]/i.test(text)) return undefined;
  return clampUpstreamDelay(Date.parse(text) - now);
}

/** The error's code; looks inside AggregateError (Node's happy-eyeballs connect) as well. */
function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  const inner = (error as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.length > 0) return errorCode(inner[0]);
  const cause = (error as { cause?: unknown }).cause;
  return cause === undefined ? undefined : errorCode(cause);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : 'unsupported request';
}
