/**
 * Namespaced tools (`{type: "namespace", name, tools: [...]}`, which Codex
 * sends for its sub-agent tools) on chat-completions targets, whose tool list
 * is flat: each function of a namespace is offered upstream as
 * `<namespace>__<name>`, and a call the model makes to that name comes back
 * to the client as `{name, namespace}`, as OpenAI answers it. A
 * `function_call` item of an earlier turn carrying `namespace` is sent upstream
 * under the same flat name, so the model sees its own call again.
 *
 * The one rule for the flat name is here; decode-tools.ts builds the map of
 * the request's flat names, the encoders read it back (`DecodedRequest.toolNames`).
 */
import type { ClientToolName } from '../codec.js';

/** Chat's function names are at most 64 characters of [a-zA-Z0-9_-] (OpenAI's rule; others follow it). */
export const CHAT_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export function flatToolName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

/** The tool a call names, as the client knows it: a namespace's function, or a function of no namespace. */
export type CalledTool = ClientToolName | { readonly name: string; readonly namespace?: undefined };

/** The tool a call to `chatName` names, as the client knows it. */
export function calledTool(chatName: string, toolNames: ReadonlyMap<string, ClientToolName> | undefined): CalledTool {
  return toolNames?.get(chatName) ?? { name: chatName };
}
