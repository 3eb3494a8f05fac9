/**
 * The router's `chat.completion` → Anthropic's `message`: one text block for
 * the answer's text (none when it has only tool calls), one `tool_use` block
 * per tool call (`input` parsed from the call's JSON arguments), the stop
 * reason and usage of message-parts.ts. Serialised once; the upstream's own
 * text is not relayed, since this is a translation of it.
 */
import { estimatePromptTokens, estimateTokens, type ChatRequestBody, type JsonResult } from '@mana/llm-router';
import { isPlainObject } from '../../plain-object.js';
import type { DecodedRequest } from '../codec.js';
import { modelOf } from '../answer-model.js';
import { messageId, stopOf, usageJson } from './message-parts.js';

type Json = Record<string, unknown>;

export function anthropicMessage(result: JsonResult, request: DecodedRequest): string {
  const choices = result.body.choices;
  const choice: Json = Array.isArray(choices) && isPlainObject(choices[0]) ? choices[0] : {};
  const message: Json = isPlainObject(choice.message) ? choice.message : {};
  const content: Json[] = [];
  // A refusal is the answer's text (stop_reason `refusal` says what it is).
  const text = typeof message.content === 'string' && message.content !== '' ? message.content : typeof message.refusal === 'string' ? message.refusal : '';
  if (text !== '') content.push({ type: 'text', text });
  let argumentsText = '';
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isPlainObject(call) || !isPlainObject(call.function)) continue;
      const args = typeof call.function.arguments === 'string' ? call.function.arguments : '';
      argumentsText += args;
      content.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(args) });
    }
  }
  const stop = stopOf(typeof message.refusal === 'string' && text === message.refusal ? 'content_filter' : choice.finish_reason, choice.stop_reason, request);
  return JSON.stringify({
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model: modelOf(request, result.outcome),
    content,
    stop_reason: stop.stop_reason,
    stop_sequence: stop.stop_sequence,
    usage: usageJson(
      result.usage,
      () => estimatePromptTokens(request.body as ChatRequestBody),
      () => estimateTokens(text) + estimateTokens(argumentsText),
    ),
  });
}

/**
 * A tool call's arguments as the `input` object Anthropic's clients expect.
 * Arguments that are not a JSON object (a model's malformed call) become `{}`:
 * the client then answers the call with its own validation error.
 */
export function toolInput(args: string): Json {
  if (args === '') return {};
  try {
    const value: unknown = JSON.parse(args);
    return isPlainObject(value) ? value : {};
  } catch {
    return {};
  }
}
