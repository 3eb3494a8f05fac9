/**
 * Errors of `/v1/responses`: OpenAI's shape with the same codes and statuses
 * as chat completions (http/errors.ts). One difference: an error the router
 * raises names the parameter of the chat request it routed (`response_format`
 * for a schema that does not compile, `reasoning_effort` no target can
 * honour), which the client never wrote; its `param` and message name the
 * Responses field it came from instead.
 */
import { errorBody, type GatewayError } from '../../http/errors.js';

/** Chat request parameter → the Responses field it was decoded from (decode-responses.ts). */
const RESPONSES_NAMES: ReadonlyArray<readonly [chat: string, responses: string]> = [
  // The longer name first: it contains the shorter one.
  ['response_format.json_schema.schema', 'text.format.schema'],
  ['response_format', 'text.format'],
  ['max_completion_tokens', 'max_output_tokens'],
  ['reasoning_effort', 'reasoning.effort'],
  ['verbosity', 'text.verbosity'],
  ['messages', 'input'],
];

export function responsesErrorBody(error: GatewayError): string {
  const param = error.param;
  if (param === undefined) return errorBody(error);
  const renamed = RESPONSES_NAMES.find(([chat]) => param === chat || param.startsWith(`${chat}.`) || param.startsWith(`${chat}[`));
  if (renamed === undefined) return errorBody(error);
  // Only the parameter's own names: `messages` is also a word of many messages.
  let message = error.message;
  for (const [chat, responses] of RESPONSES_NAMES) if (chat.startsWith(renamed[0])) message = message.split(chat).join(responses);
  return errorBody({ ...error, param: renamed[1] + param.slice(renamed[0].length), message });
}
