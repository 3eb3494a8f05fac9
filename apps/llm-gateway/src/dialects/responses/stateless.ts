/**
 * The Responses API served stateless: the gateway stores no response, so
 * whatever needs one is refused by name, with a stable code and the same
 * advice, never answered as if it had worked (a `previous_response_id`
 * ignored would answer without the conversation's history):
 *
 *   previous_response_id        → previous_response_not_supported
 *   conversation                → conversation_not_supported
 *   background: true            → background_not_supported
 *   item_reference input items, GET / DELETE /v1/responses/{id} (and
 *   its input_items, cancel)    → response_storage_not_supported
 *
 * `store` is accepted (of the right type) and ignored: nothing is kept either way.
 */
import { gatewayError, type GatewayError } from '../../http/errors.js';
import { Refusal } from '../../http/refusal.js';

type Json = Record<string, unknown>;

export const STATELESS_ADVICE =
  'The gateway is stateless: send the whole conversation as input with each request (earlier messages, function_call and function_call_output items), with store: false in clients that otherwise refer to stored items.';

/** Refuses what needs a stored response; returns nothing for a request that asks for none. */
export function refuseStatefulFields(body: Json): void {
  if (present(body.previous_response_id)) {
    throw new Refusal('previous_response_not_supported', `previous_response_id cannot be used: no response is stored. ${STATELESS_ADVICE}`, 'previous_response_id');
  }
  if (present(body.conversation)) {
    throw new Refusal('conversation_not_supported', `conversation cannot be used: no conversation is stored. ${STATELESS_ADVICE}`, 'conversation');
  }
  if (body.background === true) {
    throw new Refusal('background_not_supported', `background: true cannot be used: a background response would have to be stored until it is fetched. Send the request in the foreground (stream: true for a long answer). ${STATELESS_ADVICE}`, 'background');
  }
  if (present(body.prompt)) {
    throw new Refusal('unsupported_request', `prompt refers to a prompt template stored on OpenAI's platform, which the gateway cannot read: send instructions and input instead.`, 'prompt');
  }
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/** The answer to GET / DELETE /v1/responses/{id} and its sub-routes: nothing was stored to read, delete or cancel. */
export function storageNotSupported(): GatewayError {
  return gatewayError('response_storage_not_supported', `The gateway stores no responses, so none can be retrieved, deleted or cancelled. ${STATELESS_ADVICE}`);
}
