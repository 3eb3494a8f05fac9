import type { ChatRequestBody } from '../types.js';
import { UnsupportedRequestError } from './adapter.js';
import { isPlainObject } from '../plain-object.js';

/**
 * OpenAI chat request → Anthropic Messages body (`POST /v1/messages`,
 * `anthropic-version: 2023-06-01`). A pure function of the body, so a
 * Messages pass-through can reuse its pieces. Throws UnsupportedRequestError
 * (the target is skipped, another may serve) for what Messages cannot express.
 *
 * The differences it bridges: system prompts are a top-level `system`, not
 * messages; content is typed blocks; a tool call is a `tool_use` block of the
 * assistant turn with an `input` object (not a JSON string); a tool result is a
 * `tool_result` block in a user turn (several results in a row are one turn);
 * `max_tokens` is required.
 */

/**
 * `max_tokens` when the request names none (Anthropic requires one): enough for
 * a long answer on every Claude model, and plus a `thinking` budget, which must
 * fit below it.
 */
export const DEFAULT_MAX_TOKENS = 4096; // tokens

type Block = Record<string, unknown>;
type Turn = { role: 'user' | 'assistant'; content: Block[] };

export function toAnthropicRequest(body: ChatRequestBody, model: string, stream: boolean): Record<string, unknown> {
  const { system, messages } = translateMessages(body.messages);
  const out: Record<string, unknown> = { model, max_tokens: maxTokens(body), messages };
  if (system.length > 0) out.system = system;
  if (stream) out.stream = true;
  const stop = body.stop;
  if (typeof stop === 'string') out.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) out.stop_sequences = stop;
  for (const key of ['temperature', 'top_p', 'top_k'] as const) {
    if (typeof body[key] === 'number') out[key] = body[key];
  }
  if (isPlainObject(body.thinking)) out.thinking = body.thinking;
  const userId = typeof body.user === 'string' ? body.user : isPlainObject(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof userId === 'string' && userId !== '') out.metadata = { user_id: userId };
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    out.tools = body.tools.map(translateTool);
    out.tool_choice = translateToolChoice(body.tool_choice, body.parallel_tool_calls === false);
  }
  return out;
}

function maxTokens(body: ChatRequestBody): number {
  for (const key of ['max_completion_tokens', 'max_tokens'] as const) {
    const value = body[key];
    if (typeof value === 'number') return value;
  }
  const budget = isPlainObject(body.thinking) ? body.thinking.budget_tokens : undefined;
  return typeof budget === 'number' && budget > 0 ? budget + DEFAULT_MAX_TOKENS : DEFAULT_MAX_TOKENS;
}

/** `{type: 'function', function: {name, description, parameters}}` → `{name, description, input_schema}`. */
function translateTool(tool: unknown): Block {
  if (!isPlainObject(tool) || tool.type !== 'function' || !isPlainObject(tool.function) || typeof tool.function.name !== 'string') {
    throw new UnsupportedRequestError('anthropic takes function tools only');
  }
  const fn = tool.function;
  const out: Block = { name: fn.name, input_schema: isPlainObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
  if (typeof fn.description === 'string') out.description = fn.description;
  if (isPlainObject(tool.cache_control)) out.cache_control = tool.cache_control;
  return out;
}

/** OpenAI `tool_choice` → Anthropic's; the choices anthropic-parameters.ts lets through. */
function translateToolChoice(choice: unknown, serial: boolean): Block {
  if (choice === 'none') return { type: 'none' };
  const out: Block =
    choice === 'required'
      ? { type: 'any' }
      : isPlainObject(choice) && isPlainObject(choice.function) && typeof choice.function.name === 'string'
        ? { type: 'tool', name: choice.function.name }
        : { type: 'auto' };
  if (serial) out.disable_parallel_tool_use = true;
  return out;
}

function translateMessages(messages: readonly unknown[]): { system: Block[]; messages: Turn[] } {
  const system: Block[] = [];
  const turns: Turn[] = [];
  for (const message of messages) {
    if (!isPlainObject(message)) throw new UnsupportedRequestError('a message is not an object');
    const role = message.role;
    if (role === 'system' || role === 'developer') {
      // Hoisted: Messages has one system prompt, ahead of the conversation.
      system.push(...textBlocks(message.content, message.cache_control));
    } else if (role === 'user') {
      push(turns, 'user', userBlocks(message.content, message.cache_control));
    } else if (role === 'assistant') {
      push(turns, 'assistant', assistantBlocks(message));
    } else if (role === 'tool') {
      push(turns, 'user', [toolResult(message)]);
    } else {
      throw new UnsupportedRequestError(`anthropic has no ${typeof role === 'string' ? role.slice(0, 40) : 'unnamed'} role`);
    }
  }
  return { system, messages: turns };
}

/**
 * Appends a turn, merged into the one before when it has the same role:
 * tool results that follow one another, and a user message after them, must
 * be one user turn right after the assistant's tool_use turn.
 */
function push(turns: Turn[], role: Turn['role'], content: Block[]): void {
  const last = turns.at(-1);
  if (last !== undefined && last.role === role) last.content.push(...content);
  else turns.push({ role, content });
}

/** `cache_control` on the message marks its last block (where Anthropic sets a cache breakpoint). */
function withCacheControl(blocks: Block[], cacheControl: unknown): Block[] {
  const last = blocks.at(-1);
  if (last !== undefined && isPlainObject(cacheControl)) last.cache_control = cacheControl;
  return blocks;
}

function textBlock(text: string, cacheControl: unknown): Block {
  return isPlainObject(cacheControl) ? { type: 'text', text, cache_control: cacheControl } : { type: 'text', text };
}

/** Text content (a string or text parts) → text blocks; empty text is left out (Anthropic refuses empty text blocks). */
function textBlocks(content: unknown, cacheControl: unknown): Block[] {
  if (typeof content === 'string') return withCacheControl(content === '' ? [] : [textBlock(content, undefined)], cacheControl);
  if (content === null || content === undefined) return [];
  if (!Array.isArray(content)) throw new UnsupportedRequestError('message content must be a string or an array of parts');
  const blocks: Block[] = [];
  for (const part of content) {
    if (!isPlainObject(part)) continue;
    // An assistant's refusal part is its text too.
    const text = part.type === 'text' ? part.text : part.type === 'refusal' ? part.refusal : undefined;
    if (typeof text !== 'string') throw new UnsupportedRequestError(`anthropic cannot take a ${String(part.type).slice(0, 40)} part here`);
    if (text !== '') blocks.push(textBlock(text, part.cache_control));
  }
  return withCacheControl(blocks, cacheControl);
}

function userBlocks(content: unknown, cacheControl: unknown): Block[] {
  if (!Array.isArray(content)) return textBlocks(content, cacheControl);
  const blocks: Block[] = [];
  for (const part of content) {
    if (isPlainObject(part) && part.type === 'image_url') blocks.push(imageBlock(part));
    else blocks.push(...textBlocks([part], undefined));
  }
  return withCacheControl(blocks, cacheControl);
}

/** The image types Anthropic reads. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** `data:image/png;base64,…` → a base64 source; an http(s) URL → a url source (Anthropic fetches it). */
function imageBlock(part: Record<string, unknown>): Block {
  const url = isPlainObject(part.image_url) ? part.image_url.url : part.image_url;
  if (typeof url !== 'string') throw new UnsupportedRequestError('image_url without a url');
  let source: Block;
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const header = comma === -1 ? '' : url.slice(5, comma);
    if (!header.endsWith(';base64')) throw new UnsupportedRequestError('anthropic accepts only base64 data: image URLs');
    const mediaType = header.slice(0, -';base64'.length).toLowerCase();
    if (!IMAGE_TYPES.has(mediaType)) throw new UnsupportedRequestError('anthropic reads jpeg, png, gif and webp images only');
    source = { type: 'base64', media_type: mediaType, data: url.slice(comma + 1) };
  } else if (url.startsWith('https://') || url.startsWith('http://')) {
    source = { type: 'url', url };
  } else {
    throw new UnsupportedRequestError('an image URL must be a data: or http(s) URL');
  }
  return isPlainObject(part.cache_control) ? { type: 'image', source, cache_control: part.cache_control } : { type: 'image', source };
}

/** Text, then one `tool_use` block per tool call (its arguments parsed: Anthropic takes an object). */
function assistantBlocks(message: Record<string, unknown>): Block[] {
  const blocks = textBlocks(message.content, undefined);
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isPlainObject(call) || !isPlainObject(call.function) || typeof call.id !== 'string' || typeof call.function.name !== 'string') {
        throw new UnsupportedRequestError('a tool call needs an id and a function name');
      }
      blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: toolInput(call.function.arguments) });
    }
  }
  return withCacheControl(blocks, message.cache_control);
}

function toolInput(args: unknown): Record<string, unknown> {
  if (isPlainObject(args)) return args;
  if (typeof args !== 'string' || args.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new UnsupportedRequestError('tool call arguments are not JSON');
  }
  if (!isPlainObject(parsed)) throw new UnsupportedRequestError('tool call arguments are not a JSON object');
  return parsed;
}

/** A `tool` message → a `tool_result` block naming the call it answers. */
function toolResult(message: Record<string, unknown>): Block {
  if (typeof message.tool_call_id !== 'string') throw new UnsupportedRequestError('a tool message needs a tool_call_id');
  const content = typeof message.content === 'string' ? message.content : textBlocks(message.content, undefined);
  const block: Block = { type: 'tool_result', tool_use_id: message.tool_call_id, content };
  if (isPlainObject(message.cache_control)) block.cache_control = message.cache_control;
  return block;
}
