/**
 * How an API writes the gateway's errors: OpenAI's shape by default, another
 * API's own on its routes (Anthropic's Messages, the Responses API, LiteLLM's
 * model management), and which headers besides X-Request-Id carry the
 * request id there. A route declares its dialect once (route-table.ts); the
 * call answers every error of that route in it, the auth step's refusals and
 * the server's 500 included.
 */
import type { GatewayError } from '../http/errors.js';

export interface Dialect {
  /** Headers that carry the request id besides `X-Request-Id` (Anthropic's clients read `request-id`). */
  readonly requestIdHeaders: readonly string[];
  /** The JSON body of an error, the gateway's own or the router's (status and code are decided before). */
  encodeError(error: GatewayError): string;
}
