import { FINISH_REASON_BY_STOP_REASON } from '../anthropic/mapping.js';
import type { Usage } from '../types.js';
import { InvalidResponseError } from './adapter.js';
import { isPlainObject } from '../plain-object.js';
import { checkedUsage, tokenCount } from './token-usage.js';
import { ToolCallIds } from './tool-call-ids.js';

/**
 * Anthropic Messages answers → OpenAI `chat.completion`, so callers see one
 * protocol whichever target answered (the stream's twin is anthropic-stream.ts).
 */

/** OpenAI's `finish_reason` for an Anthropic `stop_reason`; one it does not know yet ends the answer as `stop`. */
export function finishReasonOf(stopReason: unknown): string {
  return (typeof stopReason === 'string' ? (FINISH_REASON_BY_STOP_REASON as Record<string, string | undefined>)[stopReason] : undefined) ?? 'stop';
}

/**
 * Anthropic `usage` → OpenAI's: the prompt is `input_tokens` (the uncached
 * part) plus the tokens read from and written to the cache, of which the read
 * ones are `cached_tokens`. Undefined when a count is missing or implausible
 * (token-usage.ts); absent cache counts are 0.
 */
export function usageOf(usage: unknown): Usage | undefined {
  if (!isPlainObject(usage)) return undefined;
  const input = tokenCount(usage.input_tokens);
  const read = usage.cache_read_input_tokens === undefined || usage.cache_read_input_tokens === null ? 0 : tokenCount(usage.cache_read_input_tokens);
  const written = usage.cache_creation_input_tokens === undefined || usage.cache_creation_input_tokens === null ? 0 : tokenCount(usage.cache_creation_input_tokens);
  if (input === undefined || read === undefined || written === undefined) return undefined;
  return checkedUsage({ prompt: input + read + written, completion: usage.output_tokens, cached: read });
}

/** OpenAI's usage object (`prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens` beside the counts) for a Usage. */
export function openAIUsage(usage: Usage): Record<string, unknown> {
  const { cached_tokens: cached, reasoning_tokens: reasoning, ...counts } = usage;
  const out: Record<string, unknown> = counts;
  if (cached !== undefined) out.prompt_tokens_details = { cached_tokens: cached };
  if (reasoning !== undefined) out.completion_tokens_details = { reasoning_tokens: reasoning };
  return out;
}

/** An Anthropic tool_use block → an OpenAI tool call; `args` defaults to its `input` as a JSON string. */
export function toolCallOf(block: Record<string, unknown>, args = JSON.stringify(isPlainObject(block.input) ? block.input : {})): Record<string, unknown> {
  return { id: typeof block.id === 'string' ? block.id : '', type: 'function', function: { name: typeof block.name === 'string' ? block.name : '', arguments: args } };
}

/**
 * A Messages answer with safe, unique tool_use ids (tool-call-ids.ts): the same
 * object when every id already is, else a copy. Calls are keyed as in the
 * translation (`0:<n>`, the n-th tool_use), so both name a call alike.
 */
export function withSafeToolUseIds(native: unknown): unknown {
  if (!isPlainObject(native) || !Array.isArray(native.content)) return native;
  const ids = new ToolCallIds();
  let calls = 0;
  let content: unknown[] | undefined;
  native.content.forEach((block: unknown, i) => {
    if (!isPlainObject(block) || block.type !== 'tool_use') return;
    const key = `0:${calls++}`;
    if (typeof block.id !== 'string' || block.id === '') return;
    const id = ids.id(block.id, key);
    if (id === block.id) return;
    content ??= [...(native.content as unknown[])];
    content[i] = { ...block, id };
  });
  return content === undefined ? native : { ...native, content };
}

/** `call` with the id the client gets (a call without one keeps its empty id: the encoders name it). */
function safeCall(call: Record<string, unknown>, ids: ToolCallIds, n: number): Record<string, unknown> {
  if (typeof call.id === 'string' && call.id !== '') call.id = ids.id(call.id, `0:${n}`);
  return call;
}

/** A non-streaming Messages answer → `chat.completion`. */
export function toOpenAICompletion(native: unknown): Record<string, unknown> {
  if (!isPlainObject(native) || !Array.isArray(native.content)) throw new InvalidResponseError('anthropic answer has no content');
  let text = '';
  let thinking = '';
  const calls: Record<string, unknown>[] = [];
  const ids = new ToolCallIds();
  for (const block of native.content) {
    if (!isPlainObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') thinking += block.thinking;
    else if (block.type === 'tool_use') calls.push(safeCall(toolCallOf(block), ids, calls.length));
    // redacted_thinking and server tool blocks have no chat completions form.
  }
  // As OpenAI answers (its spec requires `content` and `refusal`, null allowed): a message that only calls tools has null content.
  const message: Record<string, unknown> = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text, refusal: null };
  if (thinking !== '') message.reasoning_content = thinking;
  if (calls.length > 0) message.tool_calls = calls;
  const out: Record<string, unknown> = {
    id: typeof native.id === 'string' ? native.id : '',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof native.model === 'string' ? native.model : '',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(native.stop_reason) }],
  };
  const usage = usageOf(native.usage);
  if (usage !== undefined) out.usage = openAIUsage(usage);
  return out;
}
