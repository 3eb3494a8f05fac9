/**
 * Every `Attempt.reason`, declared once: the `AttemptReason` type is derived
 * from these lists, so a reason the router writes and one a caller branches on
 * cannot drift apart, and metrics, docs and tests can iterate the same lists.
 * Two reasons carry a variable part and are patterns rather than members:
 * `http_<status>` (a non-2xx upstream answer, failed over or rejected) and
 * `unconfigured: <why>` (skipped: no key, unknown provider).
 */

/**
 * Skipped because the target is full (a spill: the request passed it by for
 * the next one, or waited its queue bound first). No upstream call is made.
 */
export const CAPACITY_REASONS = [
  'saturated', // `max_concurrency` requests in flight already (and queue_timeout passed); in-flight/limit in `detail`
  'rate_limited', // its `rpm` / `tpm` window of the last minute is used up (and queue_timeout passed); use/limit in `detail`
] as const;

/** Skipped: the target was not called (no upstream call is counted). */
export const SKIP_REASONS = [
  'unhealthy', // the provider's breaker is open
  'cooling_down', // the target cools down after a 429, 5xx, 401, 402, 403 or 404
  'model_missing', // the provider's model listing lacks the model
  'unsupported_request', // the request cannot be expressed in the target's protocol
  'unsupported_parameter', // the target's protocol cannot honour a request parameter (named in `detail`)
  'context_too_small', // estimated not to fit the target's `context_window`
  ...CAPACITY_REASONS,
] as const;

/** Failed: the target was called and the request moved on (or ended, when it was the last). */
export const FAILURE_REASONS = [
  'connect_refused',
  'connect_reset',
  'dns',
  'connect_timeout',
  'first_byte_timeout',
  'stream_idle_timeout', // a committed stream went silent (recorded on the stream's end, not as a failover)
  'socket_closed',
  'upstream_error', // any other error the call threw
  'stream_error', // an error event before the first delta
  'empty_response',
  'empty_stream',
  'invalid_response', // malformed data
  'response_too_large', // past a `max_*_bytes` setting
  'invalid_embeddings', // wrong vector count, mixed or unrequested dimensions
  'context_length', // the upstream said the prompt does not fit
  'content_filter', // the following three only where the alias lists them in `fail_over_on`
  'refusal',
  'invalid_json',
] as const;

/** Cancelled: the router closed the call itself; never a failure of the target (its health is untouched). */
export const CANCEL_REASONS = [
  'hedge_lost', // a `hedge_after` race: the other call of the race answered first
] as const;

/** Every reason without a variable part: the skips, the failures, the cancellations, `ok` (answered) and `aborted` (by the caller). */
export const ATTEMPT_REASONS = [...SKIP_REASONS, ...FAILURE_REASONS, ...CANCEL_REASONS, 'ok', 'aborted'] as const;

/** A non-2xx upstream answer: `http_503`. */
export type HttpStatusReason = `http_${number}`;

/** A target that cannot be called at all: `unconfigured: missing api key (GROQ_API_KEY)`. */
export type UnconfiguredReason = `unconfigured: ${string}`;

export type AttemptReason = (typeof ATTEMPT_REASONS)[number] | HttpStatusReason | UnconfiguredReason;
