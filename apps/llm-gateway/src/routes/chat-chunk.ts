/**
 * What the stream encoders of other dialects (anthropic/message-stream.ts,
 * responses/response-stream.ts) read of the router's `chat.completion.chunk`
 * events, read alike: the chunk's first choice (each chunk parsed once), the
 * tool call a tool-call delta belongs to, and a delta's text.
 */
import { isPlainObject } from '../plain-object.js';

type Json = Record<string, unknown>;

/** The first choice of one chunk (its JSON text); undefined when it has none (a usage-only chunk). */
export function firstChoice(chunk: string): Json | undefined {
  const value = JSON.parse(chunk) as Json;
  const choice: unknown = Array.isArray(value.choices) ? value.choices[0] : undefined;
  return isPlainObject(choice) ? choice : undefined;
}

/**
 * The chat index of the tool call a tool-call delta belongs to, `last` being
 * the index of the call before. OpenAI numbers its calls; a server that
 * numbers none starts a new call with each id, and continues the last one without.
 */
export function toolCallIndex(call: Json, last: number): number {
  return typeof call.index === 'number' ? call.index : typeof call.id === 'string' ? last + 1 : Math.max(last, 0);
}

/** A delta's text (content, refusal, arguments) when there is some. */
export function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
