import type { ChatRequestBody } from '../types.js';
import { isPlainObject } from '../plain-object.js';
import { firstRefused, OPENAI_ONLY, type Refusal } from './refused-parameters.js';

/**
 * The OpenAI chat parameters Anthropic's Messages API cannot honour. As for
 * Ollama (ollama-parameters.ts), dropping one would answer as if it had been
 * honoured (one choice where `n: 3` asked for three, free text where
 * `response_format` asked for JSON, another sampling than the one asked
 * for), so a target that would have to drop one is skipped before any call
 * (`unsupported_parameter`), and a chain where no target can honour it
 * answers 400 naming the parameter. Anthropic's own OpenAI compatibility
 * layer ignores most of these silently; a gateway that fails over must not.
 *
 * Honoured or translated by anthropic-request.ts: messages (system and
 * developer hoisted into `system`, text and image parts, tool calls and
 * results), tools, `tool_choice` (`auto`, `required` → `any`, `none`, a named
 * function → `tool`), `parallel_tool_calls: false` → `disable_parallel_tool_use`,
 * max_tokens / max_completion_tokens, stop → stop_sequences, temperature
 * (0–1), top_p, `user` → `metadata.user_id`, `response_format` `text`, and
 * the Anthropic parameters a chat body may carry: top_k, thinking,
 * cache_control (on a message, a content part or a tool).
 */
const REFUSED: readonly Refusal[] = [
  ...OPENAI_ONLY,
  // Anthropic has no penalties and no seed: another sampling than the one asked for.
  ['frequency_penalty', (v) => typeof v === 'number' && v !== 0],
  ['presence_penalty', (v) => typeof v === 'number' && v !== 0],
  ['seed', () => true],
  // Anthropic's range is 0–1; OpenAI's goes to 2.
  ['temperature', (v) => typeof v === 'number' && v > 1],
  // "All non-whitespace stop sequences work" (Anthropic's OpenAI compatibility notes): a whitespace-only one is refused upstream.
  ['stop', (v) => (typeof v === 'string' ? [v] : Array.isArray(v) ? v : []).some((s) => typeof s !== 'string' || s.trim() === '')],
  ['response_format', (v) => !isPlainObject(v) || v.type !== 'text'],
  ['tool_choice', (v) => !(v === 'auto' || v === 'none' || v === 'required' || (isPlainObject(v) && v.type === 'function'))],
  ['reasoning_effort', () => true],
  ['verbosity', () => true],
  ['functions', () => true],
  ['function_call', () => true],
];

/** The first request parameter Anthropic cannot honour, or undefined. Absent and `null` values ask for nothing. */
export function anthropicUnsupportedParameter(body: ChatRequestBody): string | undefined {
  return firstRefused(body, REFUSED);
}
