import type { ChatRequestBody, ProviderConfig } from '../types.js';
import { UnsupportedRequestError } from './adapter.js';
import { isPlainObject } from '../plain-object.js';

/**
 * OpenAI chat request → Ollama native `/api/chat` body.
 * Ollama takes images as bare base64 next to the text, tool-call arguments as
 * objects (not JSON strings), and sampling parameters inside `options`.
 */
export function toOllamaRequest(
  body: ChatRequestBody,
  model: string,
  provider: ProviderConfig,
  stream: boolean,
  contextWindow?: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    model,
    messages: translateMessages(body.messages),
    stream,
    options: translateOptions(body, provider.options, contextWindow),
  };
  // `tool_choice: none` is honoured by not offering the tools (other choices are refused before, see ollama-parameters.ts).
  if (Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none') out.tools = body.tools;
  const format = translateFormat(body.response_format);
  if (format !== undefined) out.format = format;
  if (body.keep_alive !== undefined) out.keep_alive = body.keep_alive;
  if (typeof body.think === 'boolean') out.think = body.think;
  return out;
}

/** OpenAI parameter → Ollama option name. */
const OPTION_NAMES: ReadonlyArray<readonly [string, string]> = [
  ['temperature', 'temperature'],
  ['top_p', 'top_p'],
  // Not OpenAI's, but vLLM's, llama.cpp's and Anthropic's (a Messages request decodes to it).
  ['top_k', 'top_k'],
  ['seed', 'seed'],
  ['frequency_penalty', 'frequency_penalty'],
  ['presence_penalty', 'presence_penalty'],
  ['max_tokens', 'num_predict'],
  ['max_completion_tokens', 'num_predict'],
];

/**
 * Provider options ← the target's context window as `num_ctx` ← caller's
 * `options` ← mapped OpenAI parameters. `num_ctx` is always sent: the window
 * the router checked a prompt against must be the one Ollama uses, or Ollama
 * would cut a longer prompt silently (see config/context-window.ts).
 */
function translateOptions(
  body: ChatRequestBody,
  providerOptions: Readonly<Record<string, unknown>>,
  contextWindow: number | undefined,
): Record<string, unknown> {
  const options: Record<string, unknown> = { ...providerOptions };
  if (contextWindow !== undefined) options.num_ctx = contextWindow;
  if (isPlainObject(body.options)) Object.assign(options, body.options);
  for (const [from, to] of OPTION_NAMES) {
    const value = body[from];
    if (value !== undefined && value !== null) options[to] = value;
  }
  if (typeof body.stop === 'string') options.stop = [body.stop];
  else if (Array.isArray(body.stop)) options.stop = body.stop;
  return options;
}

function translateFormat(format: unknown): unknown {
  if (!isPlainObject(format)) return undefined;
  if (format.type === 'json_object') return 'json';
  if (format.type === 'json_schema' && isPlainObject(format.json_schema)) return format.json_schema.schema ?? 'json';
  return undefined;
}

function translateMessages(messages: readonly unknown[]): Record<string, unknown>[] {
  // Ollama names a tool result by function name; OpenAI by call id — remember the ids.
  const toolNames = new Map<string, string>();
  const out: Record<string, unknown>[] = [];
  for (const message of messages) {
    if (!isPlainObject(message)) throw new UnsupportedRequestError('a message is not an object');
    const role = typeof message.role === 'string' ? message.role : 'user';
    const native: Record<string, unknown> = { role: role === 'developer' ? 'system' : role };
    const images: string[] = [];
    native.content = translateContent(message.content, images);
    if (images.length > 0) native.images = images;
    if (Array.isArray(message.tool_calls)) native.tool_calls = translateToolCalls(message.tool_calls, toolNames);
    if (role === 'tool' && typeof message.tool_call_id === 'string') {
      const name = toolNames.get(message.tool_call_id);
      if (name !== undefined) native.tool_name = name;
    }
    out.push(native);
  }
  return out;
}

function translateContent(content: unknown, images: string[]): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) throw new UnsupportedRequestError('message content must be a string or an array of parts');
  let text = '';
  for (const part of content) {
    if (!isPlainObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') {
      text = text.length === 0 ? part.text : text + '\n' + part.text;
    } else if (part.type === 'image_url') {
      const url = isPlainObject(part.image_url) ? part.image_url.url : part.image_url;
      images.push(dataUrlToBase64(url));
    }
  }
  return text;
}

/** `data:image/png;base64,AAAA` → `AAAA`. Ollama cannot fetch remote URLs, so those go to another target. */
function dataUrlToBase64(url: unknown): string {
  if (typeof url !== 'string') throw new UnsupportedRequestError('image_url without a url');
  if (!url.startsWith('data:')) throw new UnsupportedRequestError('ollama accepts only data: image URLs');
  const comma = url.indexOf(',');
  if (comma === -1 || !url.slice(0, comma).endsWith(';base64')) {
    throw new UnsupportedRequestError('ollama accepts only base64 data: image URLs');
  }
  return url.slice(comma + 1);
}

function translateToolCalls(calls: readonly unknown[], toolNames: Map<string, string>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const call of calls) {
    if (!isPlainObject(call) || !isPlainObject(call.function)) continue;
    const name = typeof call.function.name === 'string' ? call.function.name : '';
    if (typeof call.id === 'string') toolNames.set(call.id, name);
    out.push({ function: { name, arguments: parseArguments(call.function.arguments) } });
  }
  return out;
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string') return isPlainObject(args) ? args : {};
  if (args.length === 0) return {};
  try {
    return JSON.parse(args);
  } catch {
    throw new UnsupportedRequestError('tool call arguments are not JSON');
  }
}
