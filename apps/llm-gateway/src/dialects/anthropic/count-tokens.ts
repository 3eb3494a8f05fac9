/**
 * POST /v1/messages/count_tokens: `{"input_tokens": N}` for a Messages
 * request (without `max_tokens`: nothing is generated). N is the gateway's
 * estimate (the one context fit uses, @mana/llm-router's
 * estimatePromptTokens) of the prompt as the alias's first usable target
 * would get it (the router picks it by the attempt loop's own pre-call
 * checks); nothing is sent upstream. A service key's allow-list applies as on
 * `/v1/messages` (403 alias_not_allowed). The body passes the same guards as
 * `/v1/messages` and is decoded alike; whatever cannot be counted (a bad
 * body, an unknown model) is a 4xx in Anthropic's shape, never a 200 with a
 * made-up 0 (Claude Code's auto-compaction reads the figure).
 *
 * An inbound API of its own (`api: "count_tokens"`): each request is counted
 * in the request metrics, recorded and logged like a routed one, with no
 * alias or target (nothing was routed) and no tokens (nothing was billed).
 */
import { isRouterError, type TokenCount } from '@mana/llm-router';
import { decodeCountTokensRequest } from './decode-messages.js';
import type { Call } from '../../call.js';
import { fromRouterError, gatewayError } from '../../http/errors.js';
import type { InboundRoute } from '../inbound-api.js';
import { aliasRefusal } from '../../pipeline/key-policy.js';
import { MESSAGES } from './messages.js';
import { exchangeOf, guardedBody } from '../../pipeline/routed-pipeline.js';

/**
 * Anthropic's dialect, as on `/v1/messages`; its own route and `api` on the
 * log line, the record and the metrics; no `operation`: it routes nothing, so
 * it is not traced.
 */
export const COUNT_TOKENS: InboundRoute = {
  path: '/v1/messages/count_tokens',
  api: 'count_tokens',
  requestIdHeaders: MESSAGES.requestIdHeaders,
  encodeError: MESSAGES.encodeError,
};

export async function handleCountTokens(call: Call): Promise<void> {
  const ex = exchangeOf(call);
  const body = await guardedBody(call, ex);
  if (body === undefined) return;
  const decoded = decodeCountTokensRequest(body.value, body);
  if (!decoded.ok) return call.error(gatewayError(decoded.error.code, decoded.error.message, { param: decoded.error.param }));
  ex.askedFor(decoded.model);
  const refused = aliasRefusal(call.caller, decoded.model, 'chat');
  if (refused !== undefined) return call.error(refused);
  let count: TokenCount;
  try {
    count = call.ctx.router.countTokens({ model: decoded.model, operation: 'chat', body: decoded.body, original: decoded.original, nativeOnly: decoded.nativeOnly, stream: false });
  } catch (error) {
    if (!isRouterError(error)) throw error;
    return call.error(fromRouterError(error, decoded.model));
  }
  call.json(200, { input_tokens: count.inputTokens });
}
