/**
 * Anthropic `system` and `messages` → OpenAI chat messages, in one pass:
 *
 *   system (string or text blocks)          → one `system` message
 *   a `system` turn inside messages         → a `system` message in its place (Claude Code's
 *     (string or text blocks)                 mid-conversation system messages; Ollama and
 *                                             OpenAI-compatible servers take one anywhere)
 *   user: text, image                       → a `user` message (text and `image_url` parts)
 *   user: tool_result (string or blocks)    → a `tool` message each, before the rest of the turn
 *   assistant: text                         → `content`
 *   assistant: tool_use                     → `tool_calls` (input as JSON text)
 *   thinking, redacted_thinking             → dropped (the model's own reasoning; OpenAI-shaped
 *                                             targets take none back; the original request keeps them)
 *
 * `cache_control` on any block is dropped the same way. A block no
 * OpenAI-shaped target can take (documents, the calls and results of
 * Anthropic's server tools) is left out of the translation and named for the
 * router (`nativeOnly`): only a target that takes the request natively gets it,
 * any other is skipped, or under `hosted_tools: drop` gets the conversation
 * without a server tool's blocks. A block this list does not know is refused
 * with a 400 naming it, never passed on to fail upstream.
 * Images must be base64 of an image type, or a URL; a `tool_result` must
 * answer a `tool_use` of the message right before it, as Anthropic requires.
 */
import type { NativeOnlyPart } from '@mana/llm-router';
import { isPlainObject } from '../../plain-object.js';
import { Refusal, wrongType } from '../../http/refusal.js';

type Json = Record<string, unknown>;

/**
 * Known block types no OpenAI-shaped target can express, and whether
 * `hosted_tools: drop` may leave them out: a server tool's call and results
 * may go with the tool; what the client supplied (a document, search results,
 * an MCP exchange, a file) never.
 */
const NATIVE_ONLY = new Map<string, boolean>([
  ['document', false],
  ['search_result', false],
  ['server_tool_use', true],
  ['web_search_tool_result', true],
  ['web_fetch_tool_result', true],
  ['code_execution_tool_result', true],
  ['bash_code_execution_tool_result', true],
  ['text_editor_code_execution_tool_result', true],
  ['tool_search_tool_result', true],
  ['mcp_tool_use', false],
  ['mcp_tool_result', false],
  ['container_upload', false],
]);
const DROPPED = new Set(['thinking', 'redacted_thinking']);
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Base64 as Anthropic takes it: the standard alphabet, padded to a multiple of 4. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The OpenAI messages of a Messages request: its system prompt first, then each turn; blocks left out go to `nativeOnly`. */
export function decodeConversation(system: unknown, messages: readonly unknown[], nativeOnly: NativeOnlyPart[]): Json[] {
  const out: Json[] = [];
  const skipped = new NativeOnlyBlocks(nativeOnly);
  if (system !== undefined && system !== null) out.push({ role: 'system', content: systemText(system, 'system') });
  // The tool_use ids of the message before: a tool_result must answer one of them.
  let offered: ReadonlySet<string> = NONE;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    const param = `messages[${i}]`;
    if (!isPlainObject(message)) throw wrongType(param, 'an object', message);
    const content = message.content;
    if (typeof content !== 'string' && !Array.isArray(content)) throw wrongType(`${param}.content`, 'a string or an array of content blocks', content);
    if (message.role === 'user') {
      userTurn(content, param, offered, out, skipped);
      offered = NONE;
    } else if (message.role === 'assistant') {
      offered = assistantTurn(content, param, out, skipped);
    } else if (message.role === 'system') {
      // Kept in place, not hoisted: where it stands is what it means. Like a user turn it
      // ends what a tool_result may answer (OpenAI wants tool messages right after the calls).
      out.push({ role: 'system', content: systemText(content, `${param}.content`) });
      offered = NONE;
    } else {
      // "role '…' is not supported": the wording clients such as Claude Code read to fall back on their own.
      const role = typeof message.role === 'string' ? `'${message.role.slice(0, 40)}'` : 'a missing role';
      throw new Refusal('invalid_request', `${param}.role: role ${role} is not supported; a message's role must be 'user', 'assistant' or 'system'.`, `${param}.role`);
    }
  }
  return out;
}

const NONE: ReadonlySet<string> = new Set();

/** A system prompt (top-level, or a system turn's content at `param`): a string, or text blocks joined by newlines. */
function systemText(system: unknown, param: string): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) throw wrongType(param, 'a string or an array of text blocks', system);
  let text = '';
  for (let i = 0; i < system.length; i++) {
    const block = system[i];
    if (!isPlainObject(block) || block.type !== 'text') throw new Refusal('invalid_request', `${param}[${i}] must be a text block.`, `${param}[${i}]`);
    const piece = textOf(block, `${param}[${i}]`);
    text = text === '' ? piece : `${text}\n${piece}`;
  }
  return text;
}

function textOf(block: Json, param: string): string {
  if (typeof block.text !== 'string') throw wrongType(`${param}.text`, 'a string', block.text);
  return block.text;
}

/** A block's `type`, checked to be a string; blocks this decoder never sees as parts are refused by the caller. */
function blockType(block: unknown, param: string): string {
  if (!isPlainObject(block)) throw wrongType(param, 'a content block (an object)', block);
  if (typeof block.type !== 'string') throw wrongType(`${param}.type`, 'a string', block.type);
  return block.type;
}

/** Where the blocks left out of the translation are named (RouterRequest.nativeOnly). */
class NativeOnlyBlocks {
  constructor(private readonly parts: NativeOnlyPart[]) {}

  /** How many were left out so far. */
  get count(): number {
    return this.parts.length;
  }

  /** True when `type` is such a block (then named at `param`); false for any other. */
  skip(type: string, param: string): boolean {
    const droppable = NATIVE_ONLY.get(type);
    if (droppable === undefined) return false;
    this.parts.push({ param: `${param}.type`, name: type, droppable });
    return true;
  }
}

function unknownBlock(type: string, param: string, role: string): Refusal {
  return new Refusal('invalid_request', `${param}.type '${type.slice(0, 60)}' is not a content block type of ${role} messages.`, `${param}.type`);
}

/** A user turn: its tool results as `tool` messages (OpenAI wants them right after the calls), then the rest. */
function userTurn(content: string | unknown[], param: string, offered: ReadonlySet<string>, out: Json[], skipped: NativeOnlyBlocks): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  const parts: Json[] = [];
  for (let j = 0; j < content.length; j++) {
    const block = content[j] as Json;
    const at = `${param}.content[${j}]`;
    const type = blockType(block, at);
    if (type === 'text') parts.push({ type: 'text', text: textOf(block, at) });
    else if (type === 'image') parts.push(imagePart(block, at));
    else if (type === 'tool_result') out.push(toolMessage(block, at, offered, parts, skipped));
    else if (!DROPPED.has(type) && !skipped.skip(type, at)) throw unknownBlock(type, at, 'user');
  }
  if (parts.length === 0) return;
  // One text part is the plain string every OpenAI-compatible server reads.
  out.push({ role: 'user', content: parts.length === 1 && parts[0]!.type === 'text' ? parts[0]!.text : parts });
}

/** A tool result → a `tool` message; images inside it join the user message that follows (tool messages hold text only). */
function toolMessage(block: Json, param: string, offered: ReadonlySet<string>, images: Json[], skipped: NativeOnlyBlocks): Json {
  const id = block.tool_use_id;
  if (typeof id !== 'string') throw wrongType(`${param}.tool_use_id`, 'a string', id);
  if (!offered.has(id)) {
    throw new Refusal(
      'invalid_request',
      `${param}.tool_use_id '${id.slice(0, 80)}' answers no tool_use block of the message before it: each tool_result must answer a tool_use of the previous assistant message.`,
      `${param}.tool_use_id`,
    );
  }
  let text = '';
  const inner = block.content;
  if (typeof inner === 'string') text = inner;
  else if (Array.isArray(inner)) {
    for (let k = 0; k < inner.length; k++) {
      const part = inner[k] as Json;
      const at = `${param}.content[${k}]`;
      const type = blockType(part, at);
      if (type === 'text') text = text === '' ? textOf(part, at) : `${text}\n${textOf(part, at)}`;
      else if (type === 'image') images.push(imagePart(part, at));
      else if (!skipped.skip(type, at)) throw unknownBlock(type, at, 'tool_result');
    }
  } else if (inner !== undefined && inner !== null) throw wrongType(`${param}.content`, 'a string or an array of text and image blocks', inner);
  if (block.is_error !== undefined && block.is_error !== null && typeof block.is_error !== 'boolean') throw wrongType(`${param}.is_error`, 'a boolean', block.is_error);
  // OpenAI's tool message has no error flag: the text says it, so the model still learns the call failed.
  return { role: 'tool', tool_call_id: id, content: block.is_error === true ? `Error: ${text}` : text };
}

/** An image block → an `image_url` part: base64 as a `data:` URL, a URL as it is. */
function imagePart(block: Json, param: string): Json {
  const source = block.source;
  if (!isPlainObject(source)) throw wrongType(`${param}.source`, 'an object', source);
  if (source.type === 'url') {
    if (typeof source.url !== 'string' || !/^https?:\/\//i.test(source.url)) {
      throw new Refusal('invalid_request', `${param}.source.url must be an http(s) URL.`, `${param}.source.url`);
    }
    return { type: 'image_url', image_url: { url: source.url } };
  }
  if (source.type !== 'base64') {
    throw new Refusal('invalid_request', `${param}.source.type must be 'base64' or 'url'.`, `${param}.source.type`);
  }
  const mediaType = source.media_type;
  if (typeof mediaType !== 'string' || !IMAGE_TYPES.has(mediaType)) {
    throw new Refusal('invalid_request', `${param}.source.media_type must be one of ${[...IMAGE_TYPES].join(', ')}.`, `${param}.source.media_type`);
  }
  const data = source.data;
  if (typeof data !== 'string' || data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) {
    throw new Refusal('invalid_request', `${param}.source.data is not base64 image data.`, `${param}.source.data`);
  }
  return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${data}` } };
}

/** An assistant turn → one assistant message; returns the ids of its tool calls (the next turn may answer them). */
function assistantTurn(content: string | unknown[], param: string, out: Json[], skipped: NativeOnlyBlocks): ReadonlySet<string> {
  if (typeof content === 'string') {
    out.push({ role: 'assistant', content });
    return NONE;
  }
  let text = '';
  const calls: Json[] = [];
  const ids = new Set<string>();
  const before = skipped.count;
  for (let j = 0; j < content.length; j++) {
    const block = content[j] as Json;
    const at = `${param}.content[${j}]`;
    const type = blockType(block, at);
    if (type === 'text') text += textOf(block, at);
    else if (type === 'tool_use') {
      const { id, name, input } = block;
      if (typeof id !== 'string' || id === '') throw wrongType(`${at}.id`, 'a non-empty string', id);
      if (typeof name !== 'string' || name === '') throw wrongType(`${at}.name`, 'a non-empty string', name);
      if (!isPlainObject(input)) throw wrongType(`${at}.input`, 'an object', input);
      ids.add(id);
      calls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(input) } });
    } else if (!DROPPED.has(type) && !skipped.skip(type, at)) throw unknownBlock(type, at, 'assistant');
  }
  // A turn that held nothing translatable (only a server tool's call and result) is no message for a chat target.
  if (text === '' && calls.length === 0 && skipped.count > before) return NONE;
  const message: Json = { role: 'assistant', content: calls.length > 0 && text === '' ? null : text };
  if (calls.length > 0) message.tool_calls = calls;
  out.push(message);
  return ids;
}
