/**
 * POST /v1/responses: OpenAI's Responses API on the routed pipeline, for the
 * clients that have moved to it (Codex, the Agents SDK, `client.responses`,
 * the AI SDK's `openai.responses(…)`), served stateless. The request is
 * translated into the router's chat request (decode-responses.ts),
 * the answer back into a `response` object (response-json.ts) or
 * Responses' event stream (response-stream.ts); errors are
 * OpenAI's, with the same codes as chat (responses-errors.ts).
 * Failover, health, records and metrics are the pipeline's, as for chat
 * completions. Every provider type is reached through the translation.
 *
 * GET / DELETE /v1/responses/{id} (and its input_items, cancel) answer 400
 * `response_storage_not_supported`: nothing is stored (stateless.ts).
 */
import type { Call } from '../../call.js';
import type { Dialect } from '../dialect.js';
import { upstreamErrorBody } from '../../http/upstream-error-body.js';
import { decodeResponsesRequest } from './decode-responses.js';
import { responseJson } from './response-json.js';
import { ResponsesStream } from './response-stream.js';
import { responsesErrorBody } from './responses-errors.js';
import { storageNotSupported } from './stateless.js';
import type { InboundCodec } from '../codec.js';

export const RESPONSES: InboundCodec = {
  path: '/v1/responses',
  api: 'responses',
  operation: 'chat',
  // As on /v1/messages: clients and their users quote `request-id` in reports.
  requestIdHeaders: ['request-id'],
  decode: decodeResponsesRequest,
  encodeJson: responseJson,
  // An upstream's refusal is relayed as chat relays it: OpenAI's error shape either way.
  encodeUpstreamError: (result) => upstreamErrorBody(result.status, result.contentType, result.body),
  streamEncoder: (result, request) => new ResponsesStream(result, request),
  encodeError: responsesErrorBody,
};

/** The stored-response paths answer in the Responses API's error shape, with X-Request-Id alone. */
export const STORED_RESPONSES: Dialect = { requestIdHeaders: [], encodeError: responsesErrorBody };

/** GET / DELETE /v1/responses/{id}, …/input_items, POST …/cancel: a stable 400, never a 404 that reads as "not found yet". */
export function handleStoredResponse(call: Call): void {
  call.error(storageNotSupported());
}
