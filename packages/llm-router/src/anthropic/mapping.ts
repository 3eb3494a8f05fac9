/**
 * Anthropic Messages ↔ OpenAI chat completions: the tables both sides of the
 * gateway translate with, declared once. The gateway reads them to answer a
 * client of Anthropic's protocol from an OpenAI-shaped result; the router's
 * `anthropic` protocol reads them the other way to speak to an upstream.
 * Exported as `@mana/llm-router/anthropic` (data only: no HTTP, no I/O).
 */

/** The `anthropic-version` these tables follow (the only one Anthropic has published). */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic's `stop_reason` values. */
export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/**
 * OpenAI `finish_reason` → Anthropic `stop_reason`. `stop` is `end_turn`
 * unless the upstream names the stop sequence it met (then `stop_sequence`,
 * decided by the caller, which knows the sequence).
 */
export const STOP_REASON_BY_FINISH_REASON: Readonly<Record<string, AnthropicStopReason>> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** Anthropic `stop_reason` → OpenAI `finish_reason`. */
export const FINISH_REASON_BY_STOP_REASON: Readonly<Record<AnthropicStopReason, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // A paused server-tool turn ends this answer as a normal stop would.
  pause_turn: 'stop',
  max_tokens: 'length',
  // The answer filled the model's context window: cut short like a max_tokens stop (OpenAI has one reason for both).
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** The `stop_reason` of an OpenAI finish reason (an unknown or missing one ends the turn). */
export function stopReasonOf(finishReason: unknown): AnthropicStopReason {
  return (typeof finishReason === 'string' ? STOP_REASON_BY_FINISH_REASON[finishReason] : undefined) ?? 'end_turn';
}

/** Anthropic's `error.type` values. */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/** HTTP status → Anthropic `error.type`, as api.anthropic.com pairs them. */
export const ERROR_TYPE_BY_STATUS: Readonly<Record<number, AnthropicErrorType>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The `error.type` for any status: the table's, else `invalid_request_error` for a 4xx and `api_error` for a 5xx. */
export function errorTypeOf(status: number): AnthropicErrorType {
  return ERROR_TYPE_BY_STATUS[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
}
