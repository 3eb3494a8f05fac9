/**
 * The body of an upstream refusal (400, 422, …) as the client receives it.
 * A JSON body is relayed unchanged: it is the upstream's own OpenAI-shaped
 * error, which SDKs parse. Anything else — typically an HTML error page from a
 * proxy in front of the upstream — no OpenAI client can parse, so it is
 * wrapped in an OpenAI-shaped error with the stable code `upstream_error`,
 * the status kept and the text cut short.
 */

/** How much of a non-JSON upstream body the wrapped message quotes. */
export const UPSTREAM_TEXT_MAX_CHARS = 500;

export interface RelayedBody {
  readonly contentType: string;
  readonly body: string;
}

export function upstreamErrorBody(status: number, contentType: string | undefined, body: string): RelayedBody {
  if (isJsonObject(body)) return { contentType: contentType ?? 'application/json', body };
  // Tags and runs of whitespace carry nothing a reader needs (the body is bounded upstream: max_error_body_bytes).
  const text = body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();
  const quoted = text.length > UPSTREAM_TEXT_MAX_CHARS ? `${text.slice(0, UPSTREAM_TEXT_MAX_CHARS)}…` : text;
  const message = `The upstream refused the request with status ${status} and a non-JSON body${quoted.length > 0 ? `: ${quoted}` : '.'}`;
  return {
    contentType: 'application/json',
    body: JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'upstream_error', param: null } }),
  };
}

function isJsonObject(text: string): boolean {
  const start = text.trimStart();
  if (!start.startsWith('{')) return false;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
