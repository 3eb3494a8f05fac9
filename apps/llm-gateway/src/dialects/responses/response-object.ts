/**
 * The pieces of a Responses `response` object that the JSON answer
 * (response-json.ts) and the stream (response-stream.ts) write alike, as
 * JSON text: the object itself, its output items and parts, its status and
 * its usage. Every field the spec's `Response` requires is there (`error`,
 * `incomplete_details`, `instructions`, `tools`, `tool_choice`,
 * `parallel_tool_calls`, `temperature`, `top_p`, `metadata`, …: the request's
 * values, repeated from `echo`); none it does not define is added. Built as
 * text so that a stream writes the request's part (its tools may be large)
 * once per response, not once per event, and an item's text is serialised once.
 */
import { estimatePromptTokens, estimateTokens, type ChatRequestBody, type Usage } from '@mana/llm-router';
import type { DecodedRequest } from '../codec.js';
import type { CalledTool } from './tool-namespaces.js';

/** `status` of a response (the spec's values the gateway writes). */
export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** Why a response is incomplete, from chat's `finish_reason`; undefined: it is complete. */
export function incompleteReason(finishReason: unknown): 'max_output_tokens' | 'content_filter' | undefined {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return undefined;
}

export interface ResponseFields {
  readonly id: string;
  readonly createdAt: number;
  readonly status: ResponseStatus;
  readonly model: string;
  /** The JSON text of the `output` array. */
  readonly output: string;
  /** The request's part (`echoText`). */
  readonly echo: string;
  readonly incomplete?: 'max_output_tokens' | 'content_filter' | undefined;
  /** The JSON text of `usage`; absent while in progress (the spec's usage is never null). */
  readonly usage?: string | undefined;
  readonly error?: { readonly code: string; readonly message: string } | undefined;
}

/** The JSON text of a `response` object. */
export function responseText(f: ResponseFields): string {
  const error = f.error === undefined ? 'null' : JSON.stringify(f.error);
  const incomplete = f.incomplete === undefined ? 'null' : `{"reason":"${f.incomplete}"}`;
  const completedAt = f.status === 'completed' ? `,"completed_at":${nowSeconds()}` : '';
  const usage = f.usage === undefined ? '' : `,"usage":${f.usage}`;
  return (
    `{"id":"${f.id}","object":"response","created_at":${f.createdAt},"status":"${f.status}"${completedAt},` +
    `"error":${error},"incomplete_details":${incomplete},"model":${JSON.stringify(f.model)},"output":${f.output},${f.echo}${usage}}`
  );
}

/** The request's part of every response object, as the members of a JSON object (no braces). */
export function echoText(request: DecodedRequest): string {
  return JSON.stringify(request.echo ?? {}).slice(1, -1);
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function outputTextPart(textJson: string): string {
  return `{"type":"output_text","text":${textJson},"annotations":[],"logprobs":[]}`;
}

export function refusalPart(refusalJson: string): string {
  return `{"type":"refusal","refusal":${refusalJson}}`;
}

/** A message item; `parts`: the JSON text of its content parts. */
export function messageItem(id: string, status: ItemStatus, parts: readonly string[]): string {
  return `{"id":"${id}","type":"message","status":"${status}","role":"assistant","content":[${parts.join(',')}]}`;
}

export function functionCallItem(id: string, status: ItemStatus, callId: string, tool: CalledTool, args: string): string {
  const namespace = tool.namespace === undefined ? '' : `,"namespace":${JSON.stringify(tool.namespace)}`;
  return `{"id":"${id}","type":"function_call","status":"${status}","call_id":${JSON.stringify(callId)},"name":${JSON.stringify(tool.name)}${namespace},"arguments":${JSON.stringify(args)}}`;
}

/**
 * Responses' usage from the router's: input and output tokens as the upstream
 * reported them, its cached and reasoning tokens in the details (0 when not
 * reported, as the spec requires both; cache writes are not reported apart by
 * any chat target). Without a report, the gateway's estimates stand in (never a
 * 0 for a prompt: clients size their context by it).
 */
export function usageText(usage: Usage | undefined, request: DecodedRequest, outputText: () => string): string {
  const input = usage?.prompt_tokens ?? estimatePromptTokens(request.body as ChatRequestBody);
  const output = usage?.completion_tokens ?? estimateTokens(outputText());
  const total = usage?.total_tokens ?? input + output;
  return (
    `{"input_tokens":${input},"input_tokens_details":{"cached_tokens":${usage?.cached_tokens ?? 0},"cache_write_tokens":0},` +
    `"output_tokens":${output},"output_tokens_details":{"reasoning_tokens":${usage?.reasoning_tokens ?? 0}},"total_tokens":${total}}`
  );
}
