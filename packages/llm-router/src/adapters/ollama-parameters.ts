import type { ChatRequestBody } from '../types.js';
import { isPlainObject } from '../plain-object.js';
import { firstRefused, OPENAI_ONLY, type Refusal } from './refused-parameters.js';

/**
 * The OpenAI request parameters Ollama's native `/api/chat` cannot honour.
 * Dropping one silently would answer as if it had been honoured (one choice
 * where `n: 3` asked for three, no log-probabilities, a tool call where
 * `tool_choice` forced another), so a target that would have to drop one is
 * skipped before any call instead (`unsupported_parameter`), and a chain
 * where no target can honour it answers 400 naming the parameter.
 *
 * Honoured or translated by `ollama-request.ts`: messages, tools, `tool_choice`
 * `auto` / `none` (`none` sends no tools), `response_format` (`text`,
 * `json_object`, `json_schema`), temperature, top_p, top_k, seed, frequency_penalty,
 * presence_penalty, max_tokens / max_completion_tokens, stop, stream,
 * stream_options, keep_alive, think, options. Metadata with no effect on the
 * answer (`user`, `metadata`, `store`, `service_tier`) is not sent.
 */
const REFUSED: readonly Refusal[] = [
  ...OPENAI_ONLY,
  ['tool_choice', (v) => v !== 'auto' && v !== 'none'],
  ['parallel_tool_calls', (v) => v === false],
  ['response_format', (v) => !isPlainObject(v) || (v.type !== 'text' && v.type !== 'json_object' && v.type !== 'json_schema')],
];

/** The first request parameter Ollama cannot honour, or undefined. Absent and `null` values ask for nothing. */
export function ollamaUnsupportedParameter(body: ChatRequestBody): string | undefined {
  return firstRefused(body, REFUSED);
}
