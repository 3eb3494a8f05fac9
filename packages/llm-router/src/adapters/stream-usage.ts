/**
 * Token counts for streams the client did not ask usage for. OpenAI-compatible
 * servers report a stream's usage only when the request sets
 * `stream_options.include_usage`; the gateway needs the counts for every request
 * (cost, usage records), so it always sets it and hides the result again from a
 * client that did not ask (see OpenAIStreamDecoder). Ollama reports counts natively.
 */
import type { ChatRequestBody } from '../types.js';
import { isPlainObject } from '../plain-object.js';

/** The caller's body asks for a usage chunk itself. */
export function clientAskedUsage(body: ChatRequestBody): boolean {
  const options = body.stream_options;
  return isPlainObject(options) && options.include_usage === true;
}

/** The caller's `stream_options` (if any) with `include_usage: true`. */
export function withUsage(options: unknown): Record<string, unknown> {
  return isPlainObject(options) ? { ...options, include_usage: true } : { include_usage: true };
}

/** The chunk's JSON text without its `"usage":null` member (added by servers once usage is requested). */
export function withoutNullUsage(data: string): string {
  return data.replace(/,"usage":null(?=[,}])|"usage":null,/, '');
}
