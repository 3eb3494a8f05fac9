/**
 * A Responses request's tools → chat's, and what the answer repeats of them:
 *
 *   tools: function {name, description, parameters, strict}
 *                           → {type: function, function: {name, description, parameters, strict}}
 *   namespace {name, description, tools: [function …]}
 *                           → each function as `<namespace>__<name>` (tool-namespaces.ts)
 *   hosted tools (web_search, web_search_preview, file_search, code_interpreter,
 *   image_generation, mcp): tools OpenAI runs on its side → not in the translation
 *                           (nativeOnly): no target runs them, so each is skipped as
 *                           unsupported_parameter, or under `hosted_tools: drop` gets the
 *                           request without them; the answer repeats them as sent
 *   tools of any other type (computer_use, local_shell, custom, …): tools the client runs
 *   that have no chat form → 400 unsupported_tool naming the type
 *   tool_choice: auto / none / required → the same; {type: function, name} → chat's
 *                named function; a built-in tool's type → unsupported_tool
 *   parallel_tool_calls     → the same, beside tools only (OpenAI refuses it without any)
 *
 * `strict` goes upstream only when the client set it: Responses defaults it to
 * true, chat to false, and a schema strict mode refuses (optional properties)
 * must still work as it does on chat.
 */
import type { ChatRequestBody, NativeOnlyPart } from '@mana/llm-router';
import { isPlainObject } from '../../plain-object.js';
import { Refusal, wrongType } from '../../http/refusal.js';
import type { ClientToolName } from '../codec.js';
import { CHAT_TOOL_NAME, flatToolName } from './tool-namespaces.js';

type Json = Record<string, unknown>;

export interface DecodedTools {
  /** What the answer repeats: `tools`, `tool_choice`, `parallel_tool_calls`. */
  readonly echo: Json;
  /** Chat names of the functions of namespaces → the client's names (undefined without namespaces). */
  readonly toolNames: ReadonlyMap<string, ClientToolName> | undefined;
  /** The hosted tools offered (RouterRequest.nativeOnly); empty without any. */
  readonly nativeOnly: readonly NativeOnlyPart[];
}

/** Tools OpenAI runs on its side, dated variants included (`web_search_preview_2025_03_11`). */
const HOSTED_TOOL = /^(?:web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?|file_search|code_interpreter|image_generation|mcp)$/;

/** Sets chat's tools, tool_choice and parallel_tool_calls. */
export function decodeTools(body: Json, chat: ChatRequestBody): DecodedTools {
  const echoed: Json[] = [];
  const offered = new OfferedTools();
  const hosted: { param: string; name: string }[] = [];
  const list = body.tools;
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list)) throw wrongType('tools', 'an array', list);
    for (let i = 0; i < list.length; i++) {
      const tool: unknown = list[i];
      if (isPlainObject(tool) && tool.type === 'namespace') echoed.push(namespaceTool(tool, `tools[${i}]`, offered));
      else if (isPlainObject(tool) && typeof tool.type === 'string' && HOSTED_TOOL.test(tool.type)) {
        hosted.push({ param: `tools[${i}].type`, name: tool.type });
        echoed.push(tool);
      } else echoed.push(offered.add(functionTool(tool, `tools[${i}]`)));
    }
    if (offered.tools.length > 0) chat.tools = offered.tools;
  }
  const choice = toolChoice(body.tool_choice, chat);
  // `required` with no function tool beside forces a hosted one: it cannot be left out.
  const droppable = !(choice === 'required' && chat.tools === undefined);
  const nativeOnly = hosted.map((h): NativeOnlyPart => ({ ...h, droppable }));
  // Chat's tool_choice applies to its tools: with only hosted ones offered, a target getting the translation has none.
  if (chat.tools === undefined && nativeOnly.length > 0) delete chat.tool_choice;
  const parallel = body.parallel_tool_calls;
  if (parallel !== undefined && parallel !== null && typeof parallel !== 'boolean') throw wrongType('parallel_tool_calls', 'a boolean', parallel);
  if (typeof parallel === 'boolean' && chat.tools !== undefined) chat.parallel_tool_calls = parallel;
  return {
    echo: { tools: echoed, tool_choice: choice, parallel_tool_calls: parallel ?? true },
    toolNames: offered.toolNames.size === 0 ? undefined : offered.toolNames,
    nativeOnly,
  };
}

/** A function tool as decoded: chat's tool, the answer's, and the names it goes by upstream and for the client. */
interface FunctionTool {
  readonly chat: Json;
  readonly echo: Json;
  readonly chatName: string;
  readonly name: string;
}

/** The chat tools offered upstream, each under a name no other has, and the client's names of the renamed ones. */
class OfferedTools {
  readonly tools: Json[] = [];
  readonly toolNames = new Map<string, ClientToolName>();
  private readonly names = new Set<string>();

  /** Adds `fn` (a function of `namespace`, if given); returns what the answer repeats of it. */
  add(fn: FunctionTool, namespace?: string): Json {
    // Two tools offered under one name (a function named like a namespace's flat name) cannot be told apart in a call.
    if (this.names.has(fn.chatName)) {
      throw new Refusal('invalid_request', `Two tools are named '${fn.chatName.slice(0, 80)}' (a namespace's function is offered to chat targets as <namespace>__<name>): rename one.`, 'tools');
    }
    this.names.add(fn.chatName);
    this.tools.push(fn.chat);
    if (namespace !== undefined) this.toolNames.set(fn.chatName, { name: fn.name, namespace });
    return fn.echo;
  }
}

/** A namespace's functions → chat tools under their flat names; returns the namespace as the answer repeats it. */
function namespaceTool(tool: Json, param: string, offered: OfferedTools): Json {
  const { name: namespace, description, tools: members } = tool;
  if (typeof namespace !== 'string' || namespace === '') throw wrongType(`${param}.name`, 'a non-empty string', namespace);
  if (description !== undefined && description !== null && typeof description !== 'string') throw wrongType(`${param}.description`, 'a string', description);
  if (!Array.isArray(members) || members.length === 0) throw wrongType(`${param}.tools`, 'a non-empty array of function tools', members);
  const echoed: Json[] = [];
  for (let k = 0; k < members.length; k++) echoed.push(offered.add(functionTool(members[k], `${param}.tools[${k}]`, namespace), namespace));
  return { type: 'namespace', name: namespace, description: description ?? '', tools: echoed };
}

function builtInTool(type: unknown, param: string): Refusal {
  if (typeof type !== 'string') return wrongType(param, 'a string', type);
  return new Refusal(
    'unsupported_tool',
    `${param} is '${type.slice(0, 60)}', a tool the gateway cannot offer to chat-completions targets: only function tools are translated.`,
    param,
  );
}

/** A function tool → chat's (under its flat name when it belongs to `namespace`), and as the answer repeats it. */
function functionTool(tool: unknown, param: string, namespace?: string): FunctionTool {
  if (!isPlainObject(tool)) throw wrongType(param, 'an object', tool);
  if (tool.type !== 'function') throw builtInTool(tool.type, `${param}.type`);
  const { name, description, parameters, strict } = tool;
  if (typeof name !== 'string' || name === '') throw wrongType(`${param}.name`, 'a non-empty string', name);
  const chatName = namespace === undefined ? name : flatToolName(namespace, name);
  if (namespace !== undefined && !CHAT_TOOL_NAME.test(chatName)) {
    throw new Refusal('invalid_request', `${param}.name: '${chatName.slice(0, 80)}' (<namespace>__<name>) is not a chat tool name (at most 64 of a-z, A-Z, 0-9, _ and -).`, `${param}.name`);
  }
  if (description !== undefined && description !== null && typeof description !== 'string') throw wrongType(`${param}.description`, 'a string', description);
  if (parameters !== undefined && parameters !== null && !isPlainObject(parameters)) throw wrongType(`${param}.parameters`, 'an object (a JSON Schema)', parameters);
  if (strict !== undefined && strict !== null && typeof strict !== 'boolean') throw wrongType(`${param}.strict`, 'a boolean', strict);
  const fn: Json = { name: chatName };
  if (typeof description === 'string') fn.description = description;
  if (isPlainObject(parameters)) fn.parameters = parameters;
  if (typeof strict === 'boolean') fn.strict = strict;
  return {
    chat: { type: 'function', function: fn },
    echo: { type: 'function', name, description: description ?? null, parameters: parameters ?? null, strict: strict ?? null },
    chatName,
    name,
  };
}

/** Sets chat's tool_choice; returns the answer's (`auto` when the request named none). */
function toolChoice(choice: unknown, chat: ChatRequestBody): unknown {
  if (choice === undefined || choice === null) return 'auto';
  if (choice === 'auto' || choice === 'none' || choice === 'required') {
    chat.tool_choice = choice;
    return choice;
  }
  if (typeof choice === 'string') {
    throw new Refusal('invalid_request', `tool_choice must be 'auto', 'none', 'required' or {type: 'function', name}.`, 'tool_choice');
  }
  if (!isPlainObject(choice)) throw wrongType('tool_choice', "a string or an object", choice);
  if (choice.type !== 'function') {
    if (choice.type === 'allowed_tools') {
      throw new Refusal('unsupported_request', `tool_choice 'allowed_tools' is not translated: offer only the allowed tools in 'tools' instead.`, 'tool_choice.type');
    }
    throw builtInTool(choice.type, 'tool_choice.type');
  }
  if (typeof choice.name !== 'string' || choice.name === '') throw wrongType('tool_choice.name', 'a non-empty string', choice.name);
  chat.tool_choice = { type: 'function', function: { name: choice.name } };
  return { type: 'function', name: choice.name };
}
