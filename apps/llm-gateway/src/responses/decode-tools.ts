/**
 * A Responses request's tools → chat's, and what the answer repeats of them:
 *
 *   tools: function {name, description, parameters, strict}
 *                           → {type: function, function: {name, description, parameters, strict}}
 *   tools of any other type (web_search, file_search, computer_use, code_interpreter,
 *   mcp, image_generation, local_shell, custom, …): tools OpenAI runs on its side or
 *   that have no chat form → 400 unsupported_tool naming the type
 *   tool_choice: auto / none / required → the same; {type: function, name} → chat's
 *                named function; a built-in tool's type → unsupported_tool
 *   parallel_tool_calls     → the same, beside tools only (OpenAI refuses it without any)
 *
 * `strict` goes upstream only when the client set it: Responses defaults it to
 * true, chat to false, and a schema strict mode refuses (optional properties)
 * must still work as it does on chat.
 */
import type { ChatRequestBody } from '@mana/llm-router';
import { isPlainObject } from '../plain-object.js';
import { Refusal, wrongType } from '../http/refusal.js';

type Json = Record<string, unknown>;

/** Sets chat's tools, tool_choice and parallel_tool_calls; returns the answer's `tools`, `tool_choice` and `parallel_tool_calls`. */
export function decodeTools(body: Json, chat: ChatRequestBody): Json {
  const echoed: Json[] = [];
  const list = body.tools;
  if (list !== undefined && list !== null) {
    if (!Array.isArray(list)) throw wrongType('tools', 'an array', list);
    const tools: Json[] = [];
    for (let i = 0; i < list.length; i++) tools.push(functionTool(list[i], i, echoed));
    if (tools.length > 0) chat.tools = tools;
  }
  const choice = toolChoice(body.tool_choice, chat);
  const parallel = body.parallel_tool_calls;
  if (parallel !== undefined && parallel !== null && typeof parallel !== 'boolean') throw wrongType('parallel_tool_calls', 'a boolean', parallel);
  if (typeof parallel === 'boolean' && chat.tools !== undefined) chat.parallel_tool_calls = parallel;
  return { tools: echoed, tool_choice: choice, parallel_tool_calls: parallel ?? true };
}

function builtInTool(type: unknown, param: string): Refusal {
  if (typeof type !== 'string') return wrongType(param, 'a string', type);
  return new Refusal(
    'unsupported_tool',
    `${param} is '${type.slice(0, 60)}', a tool the gateway cannot offer to chat-completions targets: only function tools are translated.`,
    param,
  );
}

function functionTool(tool: unknown, i: number, echoed: Json[]): Json {
  const param = `tools[${i}]`;
  if (!isPlainObject(tool)) throw wrongType(param, 'an object', tool);
  if (tool.type !== 'function') throw builtInTool(tool.type, `${param}.type`);
  const { name, description, parameters, strict } = tool;
  if (typeof name !== 'string' || name === '') throw wrongType(`${param}.name`, 'a non-empty string', name);
  if (description !== undefined && description !== null && typeof description !== 'string') throw wrongType(`${param}.description`, 'a string', description);
  if (parameters !== undefined && parameters !== null && !isPlainObject(parameters)) throw wrongType(`${param}.parameters`, 'an object (a JSON Schema)', parameters);
  if (strict !== undefined && strict !== null && typeof strict !== 'boolean') throw wrongType(`${param}.strict`, 'a boolean', strict);
  const fn: Json = { name };
  if (typeof description === 'string') fn.description = description;
  if (isPlainObject(parameters)) fn.parameters = parameters;
  if (typeof strict === 'boolean') fn.strict = strict;
  echoed.push({ type: 'function', name, description: description ?? null, parameters: parameters ?? null, strict: strict ?? null });
  return { type: 'function', function: fn };
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
