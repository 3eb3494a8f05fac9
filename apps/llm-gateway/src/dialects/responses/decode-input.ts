/**
 * A Responses request's `instructions` and `input` → OpenAI chat messages, in one pass:
 *
 *   instructions                      → a leading `system` message
 *   input as a string                 → one `user` message
 *   message items (`type: message`, or no type and a `role`):
 *     user                            → `user`: input_text → text parts, input_image → image_url parts
 *     system, developer               → `system` (text only; every chat target takes `system`,
 *                                       not every one `developer`)
 *     assistant                       → `assistant`: its output_text / input_text, a refusal's text
 *   function_call                     → a tool call (id = its `call_id`) of an assistant message:
 *                                       consecutive calls (parallel calls), and calls right after
 *                                       an assistant message, join that one message
 *   function_call_output              → a `tool` message (tool_call_id = its `call_id`), which must
 *                                       answer a function_call earlier in the input
 *   reasoning                         → dropped: the model's own reasoning of an earlier turn
 *                                       (Codex sends it back); no chat target takes it
 *   item_reference                    → 400: the gateway stores no items to refer to
 *   any other item (built-in tools' calls and outputs) → 400 naming it
 *
 * The ids a client sends back are the ones the answer gave (response-ids.ts):
 * a function_call's `call_id` is the upstream's tool-call id, so the tool
 * message answers the call the model made under the id it knows.
 */
import { isPlainObject } from '../../plain-object.js';
import { Refusal, wrongType } from '../../http/refusal.js';
import { STATELESS_ADVICE } from './stateless.js';
import { flatToolName } from './tool-namespaces.js';

type Json = Record<string, unknown>;

export function decodeInput(instructions: string | undefined, input: unknown): Json[] {
  const out: Json[] = [];
  if (instructions !== undefined && instructions !== '') out.push({ role: 'system', content: instructions });
  if (input === undefined || input === null) throw new Refusal('empty_input', `'input' is required: a string or a non-empty array of input items.`, 'input');
  if (typeof input === 'string') {
    out.push({ role: 'user', content: input });
    return out;
  }
  if (!Array.isArray(input)) throw wrongType('input', 'a string or an array of input items', input);
  if (input.length === 0) throw new Refusal('empty_input', `'input' must contain at least one item.`, 'input');
  // The call_ids of the function_call items so far: a function_call_output must answer one of them.
  const calls = new Set<string>();
  // The call_ids answered so far: a second output for one call is refused like a second call with its id.
  const answered = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const item = input[i];
    const param = `input[${i}]`;
    if (!isPlainObject(item)) throw wrongType(param, 'an object', item);
    const type = item.type ?? (item.role !== undefined ? 'message' : item.id !== undefined ? 'item_reference' : undefined);
    switch (type) {
      case 'message':
        message(item, param, out);
        break;
      case 'function_call':
        functionCall(item, param, calls, out);
        break;
      case 'function_call_output':
        out.push(functionCallOutput(item, param, calls, answered));
        break;
      case 'reasoning':
        break;
      case 'item_reference':
        // The AI SDK's openai.responses() refers to its earlier answers' items unless told `store: false`.
        throw new Refusal(
          'response_storage_not_supported',
          `${param} is an item_reference, but the gateway stores no items to refer to. ${STATELESS_ADVICE} (The AI SDK: providerOptions: { openai: { store: false } }.)`,
          param,
        );
      default:
        throw unknownItem(type, param);
    }
  }
  if (out.every((m) => m.role === 'system')) throw new Refusal('empty_input', `'input' holds no message or tool call to answer.`, 'input');
  return out;
}

function unknownItem(type: unknown, param: string): Refusal {
  if (typeof type !== 'string') throw wrongType(`${param}.type`, 'a string', type);
  return new Refusal(
    'unsupported_request',
    `${param}.type '${type.slice(0, 60)}' is not an item the gateway translates for chat targets: it takes message, function_call and function_call_output items (reasoning items are dropped).`,
    `${param}.type`,
  );
}

function message(item: Json, param: string, out: Json[]): void {
  const role = item.role;
  const content = item.content;
  if (typeof content !== 'string' && !Array.isArray(content)) throw wrongType(`${param}.content`, 'a string or an array of content parts', content);
  switch (role) {
    case 'user':
      userMessage(content, param, out);
      return;
    case 'system':
    case 'developer': {
      const text = typeof content === 'string' ? content : systemText(content, param);
      out.push({ role: 'system', content: text });
      return;
    }
    case 'assistant': {
      const text = typeof content === 'string' ? content : assistantText(content, param);
      if (text !== '') out.push({ role: 'assistant', content: text });
      return;
    }
    default: {
      const named = typeof role === 'string' ? `'${role.slice(0, 40)}'` : 'missing';
      throw new Refusal('invalid_request', `${param}.role must be 'user', 'assistant', 'system' or 'developer'; it is ${named}.`, `${param}.role`);
    }
  }
}

/** A part's `type`, checked to be a string. */
function partType(part: unknown, param: string): string {
  if (!isPlainObject(part)) throw wrongType(param, 'a content part (an object)', part);
  if (typeof part.type !== 'string') throw wrongType(`${param}.type`, 'a string', part.type);
  return part.type;
}

function textOf(part: Json, param: string): string {
  if (typeof part.text !== 'string') throw wrongType(`${param}.text`, 'a string', part.text);
  return part.text;
}

function unknownPart(type: string, param: string, where: string): Refusal {
  const known = type === 'input_file' || type === 'input_audio';
  return new Refusal(
    known ? 'unsupported_request' : 'invalid_request',
    known
      ? `${param} is an '${type}' part, which the gateway does not translate for chat targets (text and images only).`
      : `${param}.type '${type.slice(0, 60)}' is not a content part of ${where}.`,
    `${param}.type`,
  );
}

function userMessage(content: string | unknown[], param: string, out: Json[]): void {
  if (typeof content === 'string') {
    out.push({ role: 'user', content });
    return;
  }
  const parts: Json[] = [];
  for (let j = 0; j < content.length; j++) {
    const at = `${param}.content[${j}]`;
    const part = content[j] as Json;
    const type = partType(part, at);
    if (type === 'input_text') parts.push({ type: 'text', text: textOf(part, at) });
    else if (type === 'input_image') parts.push(imagePart(part, at));
    else throw unknownPart(type, at, 'user messages');
  }
  if (parts.length === 0) return;
  // One text part is the plain string every OpenAI-compatible server reads.
  out.push({ role: 'user', content: parts.length === 1 && parts[0]!.type === 'text' ? parts[0]!.text : parts });
}

/** `input_image` → `image_url`: a URL or a data URL, as chat takes them; an uploaded file's id has nothing to resolve it. */
function imagePart(part: Json, param: string): Json {
  if (part.file_id !== undefined && part.file_id !== null) {
    throw new Refusal('unsupported_request', `${param}.file_id names a file uploaded to OpenAI, which the gateway cannot fetch: send the image as image_url (a URL or a data URL).`, `${param}.file_id`);
  }
  const url = part.image_url;
  if (typeof url !== 'string' || !/^(https?:\/\/|data:image\/)/i.test(url)) {
    throw new Refusal('invalid_request', `${param}.image_url must be an http(s) URL or a data:image/… URL.`, `${param}.image_url`);
  }
  const detail = part.detail;
  if (detail !== undefined && detail !== null && detail !== 'auto' && detail !== 'low' && detail !== 'high') {
    throw new Refusal('invalid_request', `${param}.detail must be 'auto', 'low' or 'high'.`, `${param}.detail`);
  }
  return { type: 'image_url', image_url: detail === undefined || detail === null || detail === 'auto' ? { url } : { url, detail } };
}

/**
 * The text of `content`'s parts, each read by `read` (its text, or undefined
 * for a part it does not take, which is refused as not one of `where`), joined by `separator`.
 */
function joinedText(content: unknown[], listParam: string, where: string, separator: string, read: (type: string, part: Json, at: string) => string | undefined): string {
  let text = '';
  for (let j = 0; j < content.length; j++) {
    const at = `${listParam}[${j}]`;
    const part = content[j] as Json;
    const type = partType(part, at);
    const piece = read(type, part, at);
    if (piece === undefined) throw unknownPart(type, at, where);
    text = j === 0 ? piece : `${text}${separator}${piece}`;
  }
  return text;
}

const inputText = (type: string, part: Json, at: string): string | undefined => (type === 'input_text' ? textOf(part, at) : undefined);

function systemText(content: unknown[], param: string): string {
  return joinedText(content, `${param}.content`, 'system and developer messages (text only)', '\n', inputText);
}

/** An earlier assistant turn's text: its output_text (or input_text) parts, and a refusal's text. */
function assistantText(content: unknown[], param: string): string {
  return joinedText(content, `${param}.content`, 'assistant messages', '', (type, part, at) => {
    if (type === 'output_text' || type === 'input_text') return textOf(part, at);
    if (type !== 'refusal') return undefined;
    if (typeof part.refusal !== 'string') throw wrongType(`${at}.refusal`, 'a string', part.refusal);
    return part.refusal;
  });
}

function nonEmptyString(item: Json, field: string, param: string): string {
  const value = item[field];
  if (typeof value !== 'string' || value === '') throw wrongType(`${param}.${field}`, 'a non-empty string', value);
  return value;
}

/** A function_call → a tool call of the assistant message it continues, or of a new one. */
function functionCall(item: Json, param: string, calls: Set<string>, out: Json[]): void {
  const callId = nonEmptyString(item, 'call_id', param);
  const name = nonEmptyString(item, 'name', param);
  const args = item.arguments;
  if (typeof args !== 'string') throw wrongType(`${param}.arguments`, 'a string (the arguments as JSON text)', args);
  const namespace = item.namespace;
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') throw wrongType(`${param}.namespace`, 'a string', namespace);
  // Two calls with one id cannot be told apart by their outputs (and Anthropic refuses a repeated tool_use id).
  if (calls.has(callId)) throw repeatedCallId(param, callId, 'function_call');
  calls.add(callId);
  // A call to a namespace's function goes upstream under the name the tool was offered by (tool-namespaces.ts).
  const upstreamName = typeof namespace === 'string' && namespace !== '' ? flatToolName(namespace, name) : name;
  const call = { id: callId, type: 'function', function: { name: upstreamName, arguments: args } };
  const last = out.at(-1);
  if (last !== undefined && last.role === 'assistant') {
    if (Array.isArray(last.tool_calls)) last.tool_calls.push(call);
    else last.tool_calls = [call];
    return;
  }
  out.push({ role: 'assistant', content: null, tool_calls: [call] });
}

/** 400 for an item whose call_id an earlier item of the same type already used. */
function repeatedCallId(param: string, callId: string, type: string): Refusal {
  return new Refusal(
    'invalid_request',
    `${param}.call_id '${callId.slice(0, 80)}' repeats the call_id of an earlier ${type} item: each call (and its output) needs its own call_id.`,
    `${param}.call_id`,
  );
}

/** A function_call_output → a `tool` message answering a call of the input. */
function functionCallOutput(item: Json, param: string, calls: ReadonlySet<string>, answered: Set<string>): Json {
  const callId = nonEmptyString(item, 'call_id', param);
  if (answered.has(callId)) throw repeatedCallId(param, callId, 'function_call_output');
  answered.add(callId);
  if (!calls.has(callId)) {
    throw new Refusal(
      'invalid_request',
      `${param}.call_id '${callId.slice(0, 80)}' answers no function_call earlier in the input: send the function_call item (with this call_id) before its output.`,
      `${param}.call_id`,
    );
  }
  const output = item.output;
  if (typeof output !== 'string' && !Array.isArray(output)) throw wrongType(`${param}.output`, 'a string or an array of input_text parts', output);
  const content = typeof output === 'string' ? output : joinedText(output, `${param}.output`, 'function call outputs (text only)', '', inputText);
  return { role: 'tool', tool_call_id: callId, content };
}
