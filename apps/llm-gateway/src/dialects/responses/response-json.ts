/**
 * The router's `chat.completion` → a Responses `response` object:
 *
 *   message.content            → a message item with one output_text part
 *   message.refusal            → a refusal part of that message item
 *   message.tool_calls         → one function_call item each, in order (`call_id`:
 *                                the upstream's call id, response-ids.ts)
 *   finish_reason length / content_filter → status `incomplete`, incomplete_details.reason
 *                                `max_output_tokens` / `content_filter` (the last item
 *                                `incomplete`); anything else → `completed`
 *   usage                      → input / output tokens and their details (response-object.ts)
 *
 * `output_text` is not written: the spec calls it an SDK convenience, which
 * the openai SDK computes from the output items.
 */
import type { JsonResult } from '@mana/llm-router';
import { modelOf } from '../answer-model.js';
import { isPlainObject } from '../../plain-object.js';
import type { DecodedRequest } from '../codec.js';
import { ResponseIds } from './response-ids.js';
import { echoText, functionCallItem, incompleteReason, messageItem, nowSeconds, outputTextPart, refusalPart, responseText, usageText, type ItemStatus } from './response-object.js';
import { calledTool } from './tool-namespaces.js';

type Json = Record<string, unknown>;

export function responseJson(result: JsonResult, request: DecodedRequest): string {
  const ids = new ResponseIds();
  const choices = result.body.choices;
  const choice: Json = Array.isArray(choices) && isPlainObject(choices[0]) ? choices[0] : {};
  const message: Json = isPlainObject(choice.message) ? choice.message : {};
  const incomplete = incompleteReason(choice.finish_reason);
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter((c): c is Json => isPlainObject(c) && isPlainObject(c.function)) : [];
  const text = typeof message.content === 'string' ? message.content : '';
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  const items: string[] = [];
  const total = (text !== '' || refusal !== '' ? 1 : 0) + calls.length;
  // The last item is the one a cut answer left unfinished.
  const statusOf = (index: number): ItemStatus => (incomplete !== undefined && index === total - 1 ? 'incomplete' : 'completed');
  if (text !== '' || refusal !== '') {
    const parts: string[] = [];
    if (text !== '') parts.push(outputTextPart(JSON.stringify(text)));
    if (refusal !== '') parts.push(refusalPart(JSON.stringify(refusal)));
    items.push(messageItem(ids.message(0), statusOf(0), parts));
  }
  let argumentsText = '';
  for (const call of calls) {
    const index = items.length;
    const fn = call.function as Json;
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    argumentsText += args;
    const tool = calledTool(typeof fn.name === 'string' ? fn.name : '', request.toolNames);
    items.push(functionCallItem(ids.functionCall(index), statusOf(index), ids.callId(call.id, index), tool, args));
  }
  return responseText({
    id: ids.response,
    createdAt: nowSeconds(),
    status: incomplete === undefined ? 'completed' : 'incomplete',
    incomplete,
    model: modelOf(request, result.outcome),
    output: `[${items.join(',')}]`,
    echo: echoText(request),
    usage: usageText(result.usage, request, () => text + refusal + argumentsText),
  });
}
