/**
 * Errors in Anthropic's shape, `{"type": "error", "error": {"type", "message"}}`,
 * with the same HTTP status the chat route gives each (http/errors.ts decides
 * it; the `error.type` follows from the status, @mana/llm-router/anthropic).
 * Besides Anthropic's two fields the error carries the gateway's stable
 * `code`, the `param` at fault and the `attempts` made, as chat errors do:
 * Anthropic's clients read `type` and `message` and pass the rest along.
 */
import { errorTypeOf } from '@mana/llm-router/anthropic';
import type { UpstreamErrorResult } from '@mana/llm-router';
import { attemptJson, type GatewayError } from '../../http/errors.js';
import { isPlainObject } from '../../plain-object.js';
import { jsonObject, upstreamErrorMessage, type RelayedBody } from '../../http/upstream-error-body.js';

/** The JSON text of an Anthropic-shaped error body for a gateway or router error. */
export function anthropicErrorBody(error: GatewayError): string {
  const detail: Record<string, unknown> = { type: errorTypeOf(error.status), message: error.message, code: error.code };
  if (error.param !== undefined) detail.param = error.param;
  const attempts = error.outcome?.attempts;
  if (attempts !== undefined && attempts.length > 0) detail.attempts = attempts.map(attemptJson);
  return JSON.stringify({ type: 'error', error: detail });
}

/**
 * An upstream's refusal (400, 422, …) in Anthropic's shape, its status kept: an
 * Anthropic error as it came, anything else (OpenAI's, Ollama's, a proxy's
 * page) re-stated with its message and the stable code `upstream_error`.
 */
export function anthropicUpstreamError(result: UpstreamErrorResult): RelayedBody {
  const json = jsonObject(result.body);
  if (json !== undefined && json.type === 'error' && isPlainObject(json.error) && typeof json.error.type === 'string') {
    return { contentType: 'application/json', body: result.body };
  }
  const error = { type: errorTypeOf(result.status), message: upstreamErrorMessage(result.status, result.body), code: 'upstream_error' };
  return { contentType: 'application/json', body: JSON.stringify({ type: 'error', error }) };
}

/** The SSE frame that ends a stream broken after its first event (never followed by message_stop). */
export function anthropicErrorEvent(error: GatewayError): string {
  return `event: error\ndata: ${anthropicErrorBody(error)}\n\n`;
}
