import { isPlainObject } from '../plain-object.js';
import type { ChatRequestBody } from '../types.js';

/**
 * What a chat request costs in prompt tokens, given what one text costs:
 * every message's text parts, tool-call names and arguments, plus
 * MESSAGE_OVERHEAD per message and REPLY_OVERHEAD once (OpenAI's documented
 * accounting for the chat template); each image part counts IMAGE_TOKENS
 * (its data URL is not text the model reads); tool definitions count as their
 * JSON text. Audio and other part types count nothing.
 */
export function requestTokens(body: ChatRequestBody, cost: (text: string) => number): number {
  let tokens = REPLY_OVERHEAD;
  for (const message of body.messages) {
    tokens += MESSAGE_OVERHEAD;
    if (!isPlainObject(message)) continue;
    const content = message.content;
    if (typeof content === 'string') tokens += cost(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (!isPlainObject(part)) continue;
        if (typeof part.text === 'string') tokens += cost(part.text);
        else if (part.type === 'image_url') tokens += IMAGE_TOKENS;
      }
    }
    if (typeof message.name === 'string') tokens += cost(message.name);
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) {
        if (!isPlainObject(call) || !isPlainObject(call.function)) continue;
        if (typeof call.function.name === 'string') tokens += cost(call.function.name);
        if (typeof call.function.arguments === 'string') tokens += cost(call.function.arguments);
      }
    }
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) tokens += cost(JSON.stringify(body.tools));
  return tokens;
}

/** Chat-template tokens around each message (role, separators): OpenAI counts 3. */
export const MESSAGE_OVERHEAD = 3;
/** Tokens that open the assistant's reply: OpenAI counts 3. */
export const REPLY_OVERHEAD = 3;
/**
 * Tokens charged per image. Models differ widely (OpenAI 85 low detail to
 * ~1,100 high detail; Gemma 3 256; LLaVA 576); the low middle keeps the
 * estimate on the side of trying.
 */
export const IMAGE_TOKENS = 256;

/** The answer's budget the request itself sets (`max_completion_tokens`, else `max_tokens`), if any. */
export function requestedCompletionTokens(body: ChatRequestBody): number | undefined {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}
