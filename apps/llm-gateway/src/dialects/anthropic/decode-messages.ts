/**
 * An Anthropic Messages request (`POST /v1/messages`, anthropic-version
 * 2023-06-01) → the router's OpenAI-shaped chat request:
 *
 *   system, messages     → messages (decode-content.ts)
 *   max_tokens           → max_tokens (required, 1 … MAX_OUTPUT_TOKENS, as Anthropic requires it)
 *   stop_sequences       → stop
 *   temperature, top_p, top_k → the same names (top_k is vLLM's, llama.cpp's and Ollama's)
 *   metadata.user_id     → user
 *   tools (input_schema) → function tools (parameters)
 *   document, search_result blocks, server tool calls and results → not in the translation, as
 *                          the typed tools below (decode-content.ts)
 *   tools of another type → not in the translation: Anthropic's own tools (server tools such as
 *                          `web_search_…`, and `bash_…`, `text_editor_…`, …) reach only a target that
 *                          takes the request natively; for any other the router skips the target or,
 *                          under `hosted_tools: drop`, sends it without the server ones (nativeOnly)
 *   tool_choice          → auto → auto, any → required, tool → that function, none → none;
 *                          disable_parallel_tool_use → parallel_tool_calls: false
 *   output_config        → response_format (format), reasoning_effort (effort, optional): output-config.ts
 *   thinking, cache_control → not in the translation (no OpenAI-shaped target takes
 *                          them); the client's request as written travels beside it (`original`)
 *                          for a target that speaks Messages
 *
 * Fields Anthropic adds later are ignored the same way rather than refused.
 * `model` follows the chat route's rule: absent, the default alias applies.
 */
import type { ChatRequestBody, NativeOnlyPart, OriginalRequest } from '@mana/llm-router';
import { isPlainObject } from '../../plain-object.js';
import { MAX_OUTPUT_TOKENS, modelError } from '../routed-body.js';
import type { Decoded, ReadBody } from '../codec.js';
import { decodeConversation } from './decode-content.js';
import { outputConfig } from './output-config.js';
import { booleanField, numberField } from '../../http/body-fields.js';
import { Refusal, typeName, wrongType } from '../../http/refusal.js';


type Json = Record<string, unknown>;

/** `POST /v1/messages`: `max_tokens` required. */
export function decodeMessagesRequest(parsed: unknown, body: ReadBody): Decoded {
  return decode(parsed, body, true);
}

/** `POST /v1/messages/count_tokens`: the same request without `max_tokens` (nothing is generated). */
export function decodeCountTokensRequest(parsed: unknown, body: ReadBody): Decoded {
  return decode(parsed, body, false);
}

function decode(parsed: unknown, read: ReadBody, generates: boolean): Decoded {
  try {
    if (!isPlainObject(parsed)) throw new Refusal('invalid_type', `The request body must be a JSON object, got ${typeName(parsed)}.`, undefined);
    const badModel = modelError(parsed.model);
    if (badModel !== undefined) throw new Refusal(badModel.code, badModel.message, badModel.param);
    const model = parsed.model as string | undefined;
    const stream = generates && booleanField(parsed, 'stream') === true;
    // `stream` always set: the adapter then has nothing to add to the body (no copy of it).
    const blocks: NativeOnlyPart[] = [];
    const chat: ChatRequestBody = { messages: decodeConversation(parsed.system, messagesOf(parsed), blocks), stream };
    if (generates) chat.max_tokens = maxTokens(parsed.max_tokens);
    sampling(parsed, chat);
    // The tools first: a refusal names the tool, before the blocks an earlier use of it left in the conversation.
    const nativeOnly = [...tools(parsed, chat), ...blocks];
    const optional: string[] = [];
    outputConfig(parsed.output_config, chat, optional);
    return {
      ok: true,
      body: chat,
      model,
      stream,
      original: originalOf(parsed, read),
      optionalParameters: optional.length === 0 ? undefined : optional,
      nativeOnly: nativeOnly.length === 0 ? undefined : nativeOnly,
    };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ok: false, error: { code: error.code, message: error.message, param: error.param } };
  }
}

function messagesOf(body: Json): unknown[] {
  const messages = body.messages;
  if (messages === undefined || messages === null) throw new Refusal('missing_messages', `'messages' is required: a non-empty array of messages.`, 'messages');
  if (!Array.isArray(messages)) throw wrongType('messages', 'an array', messages);
  if (messages.length === 0) throw new Refusal('missing_messages', `'messages' must contain at least one message.`, 'messages');
  return messages;
}

function maxTokens(value: unknown): number {
  if (value === undefined || value === null) throw new Refusal('invalid_request', `'max_tokens' is required: the most tokens the answer may have.`, 'max_tokens');
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_OUTPUT_TOKENS) {
    throw new Refusal('invalid_request', `'max_tokens' must be a whole number from 1 to ${MAX_OUTPUT_TOKENS}, got ${JSON.stringify(value)?.slice(0, 40)}.`, 'max_tokens');
  }
  return value;
}

/** temperature, top_p, top_k, stop_sequences → stop, metadata.user_id → user; `thinking` is only checked for its shape. */
function sampling(body: Json, chat: ChatRequestBody): void {
  const temperature = numberField(body, 'temperature');
  if (temperature !== undefined) chat.temperature = temperature;
  const topP = numberField(body, 'top_p');
  if (topP !== undefined) chat.top_p = topP;
  const topK = numberField(body, 'top_k', true);
  if (topK !== undefined) chat.top_k = topK;
  const stop = body.stop_sequences;
  if (stop !== undefined && stop !== null) {
    if (!Array.isArray(stop) || !stop.every((s) => typeof s === 'string')) throw wrongType('stop_sequences', 'an array of strings', stop);
    if (stop.length > 0) chat.stop = stop;
  }
  const metadata = body.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (!isPlainObject(metadata)) throw wrongType('metadata', 'an object', metadata);
    const user = metadata.user_id;
    if (user !== undefined && user !== null && typeof user !== 'string') throw wrongType('metadata.user_id', 'a string', user);
    if (typeof user === 'string' && user !== '') chat.user = user;
  }
  const thinking = body.thinking;
  if (thinking !== undefined && thinking !== null && !isPlainObject(thinking)) throw wrongType('thinking', 'an object', thinking);
}

/**
 * Anthropic's server tools: it runs them itself and the answer carries their
 * results, so a target that cannot is served by leaving them out only if the
 * operator says so (`hosted_tools: drop`). Its other typed tools (`bash_…`,
 * `text_editor_…`, `computer_…`, `memory_…`) are the client's to run from a
 * schema only Anthropic's models know: never dropped.
 */
const SERVER_TOOL = /^(web_search|web_fetch|code_execution|tool_search_tool_regex|tool_search_tool_bm25)_\d{8}$/;

/**
 * tools → function tools; tool_choice → OpenAI's. A typed tool (a server tool,
 * `web_search_…`, or another of Anthropic's own, `bash_…`) has no OpenAI form:
 * it is returned as a part only a target taking the request natively can honour.
 */
function tools(body: Json, chat: ChatRequestBody): NativeOnlyPart[] {
  const list = body.tools;
  const functions: Json[] = [];
  const typed: { param: string; name: string; toolName: unknown }[] = [];
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list)) throw wrongType('tools', 'an array', list);
    list.forEach((tool: unknown, i) => {
      const param = `tools[${i}]`;
      if (!isPlainObject(tool)) throw wrongType(param, 'an object', tool);
      if (tool.type === undefined || tool.type === null || tool.type === 'custom') functions.push(functionTool(tool, param));
      else if (typeof tool.type !== 'string' || tool.type === '') throw wrongType(`${param}.type`, 'a string', tool.type);
      else typed.push({ param: `${param}.type`, name: tool.type.slice(0, 60), toolName: tool.name });
    });
    if (functions.length > 0) chat.tools = functions;
  }
  const choice = toolChoice(body.tool_choice, chat);
  // A tool the request forces (by name, or `any` with no tool of its own beside) cannot be left out.
  const forced = (name: unknown): boolean => (choice.kind === 'tool' && choice.name === name) || (choice.kind === 'any' && functions.length === 0);
  const parts = typed.map((t): NativeOnlyPart => ({ param: t.param, name: t.name, droppable: SERVER_TOOL.test(t.name) && !forced(t.toolName) }));
  // Chat's tool_choice applies to its tools: with none left (all typed), a target getting the translation has nothing to choose.
  if (chat.tools === undefined && parts.length > 0) delete chat.tool_choice;
  return parts;
}

type Choice = { readonly kind: 'none' | 'auto' | 'any' } | { readonly kind: 'tool'; readonly name: string };

/** tool_choice → chat's (and disable_parallel_tool_use → parallel_tool_calls: false); what the request forces. */
function toolChoice(choice: unknown, chat: ChatRequestBody): Choice {
  if (choice === undefined || choice === null) return { kind: 'auto' };
  if (!isPlainObject(choice)) throw wrongType('tool_choice', 'an object', choice);
  let read: Choice;
  switch (choice.type) {
    case 'auto':
      chat.tool_choice = 'auto';
      read = { kind: 'auto' };
      break;
    case 'any':
      chat.tool_choice = 'required';
      read = { kind: 'any' };
      break;
    case 'none':
      chat.tool_choice = 'none';
      read = { kind: 'none' };
      break;
    case 'tool':
      if (typeof choice.name !== 'string' || choice.name === '') throw wrongType('tool_choice.name', 'a non-empty string', choice.name);
      chat.tool_choice = { type: 'function', function: { name: choice.name } };
      read = { kind: 'tool', name: choice.name };
      break;
    default:
      throw new Refusal('invalid_request', `tool_choice.type must be 'auto', 'any', 'tool' or 'none'.`, 'tool_choice.type');
  }
  // Only beside tools: OpenAI refuses parallel_tool_calls on a request without any.
  if (choice.disable_parallel_tool_use === true && chat.tools !== undefined) chat.parallel_tool_calls = false;
  return read;
}

/** A custom tool (with input_schema) → a function tool. */
function functionTool(tool: Json, param: string): Json {
  if (typeof tool.name !== 'string' || tool.name === '') throw wrongType(`${param}.name`, 'a non-empty string', tool.name);
  if (!isPlainObject(tool.input_schema)) throw wrongType(`${param}.input_schema`, 'an object (a JSON Schema)', tool.input_schema);
  if (tool.description !== undefined && typeof tool.description !== 'string') throw wrongType(`${param}.description`, 'a string', tool.description);
  const fn: Json = { name: tool.name, parameters: tool.input_schema };
  if (typeof tool.description === 'string') fn.description = tool.description;
  return { type: 'function', function: fn };
}

/** The client's request as written, for a target that speaks Messages (see OriginalRequest). */
function originalOf(parsed: Json, read: ReadBody): OriginalRequest {
  const model = read.scan.model;
  return {
    protocol: 'anthropic',
    body: parsed,
    bodyText: model === undefined ? undefined : { text: read.text, modelStart: model.start, modelEnd: model.end },
  };
}
