/**
 * The body of an upstream refusal (400, 422, …) as the client receives it.
 * A JSON body with an `error` object is relayed unchanged: it is the upstream's
 * own OpenAI-shaped error, which SDKs parse. Anything else no client generated
 * from OpenAI's spec can read — Ollama's `{"error": "<text>"}`, typically an
 * HTML error page from a proxy in front of the upstream — is wrapped in an
 * OpenAI-shaped error with the stable code `upstream_error`, the status kept
 * and the text cut short.
 */
import { isPlainObject } from '../plain-object.js';

/** How much of a non-JSON upstream body the wrapped message quotes. */
export const UPSTREAM_TEXT_MAX_CHARS = 500;

export interface RelayedBody {
  readonly contentType: string;
  readonly body: string;
}

export function upstreamErrorBody(status: number, contentType: string | undefined, body: string): RelayedBody {
  const json = jsonObject(body);
  if (json !== undefined && isPlainObject(json.error)) return { contentType: contentType ?? 'application/json', body };
  return {
    contentType: 'application/json',
    body: JSON.stringify({ error: { message: wrappedMessage(status, json, body), type: 'invalid_request_error', code: 'upstream_error', param: null } }),
  };
}

/**
 * What an upstream refusal says, for an API that re-states it in its own
 * shape (Anthropic Messages): the message of its OpenAI error, else the
 * wrapped description above (Ollama's error text, a non-JSON body cut short).
 */
export function upstreamErrorMessage(status: number, body: string): string {
  const json = jsonObject(body);
  if (json !== undefined && isPlainObject(json.error) && typeof json.error.message === 'string') return json.error.message;
  return wrappedMessage(status, json, body);
}

function wrappedMessage(status: number, json: Record<string, unknown> | undefined, body: string): string {
  if (json === undefined) return `The upstream refused the request with status ${status} and a non-JSON body${quote(body)}`;
  if (typeof json.error === 'string') return `The upstream refused the request with status ${status}${quote(json.error)}`;
  return `The upstream refused the request with status ${status} and a body that is not an OpenAI error${quote(body)}`;
}

/** `: <text>` cut short, or `.` when there is no text. */
function quote(body: string): string {
  // Tags and runs of whitespace carry nothing a reader needs (the body is bounded upstream: max_error_body_bytes).
  const text = body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  if (text.length === 0) return '.';
  return `: ${text.length > UPSTREAM_TEXT_MAX_CHARS ? `${text.slice(0, UPSTREAM_TEXT_MAX_CHARS)}…` : text}`;
}

export function jsonObject(text: string): Record<string, unknown> | undefined {
  const start = text.trimStart();
  if (!start.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
