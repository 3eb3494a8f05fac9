/**
 * POST /v1/messages/count_tokens: `{"input_tokens": N}` for a Messages
 * request (without `max_tokens`: nothing is generated). N is the gateway's
 * estimate (the one context fit uses, @mana/llm-router's
 * estimatePromptTokens) of the prompt as the alias's first usable target
 * would get it; nothing is sent upstream. A service key's allow-list applies
 * as on `/v1/messages` (403 alias_not_allowed). The body passes the same guards as
 * `/v1/messages` and is decoded alike; whatever cannot be counted (a bad
 * body, an unknown model) is a 4xx in Anthropic's shape, never a 200 with a
 * made-up 0 (Claude Code's auto-compaction reads the figure).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRouterError, type TokenCount } from '@mana/llm-router';
import { decodeCountTokensRequest } from '../anthropic/decode-messages.js';
import type { GatewayContext } from '../context.js';
import type { ApiCaller } from '../http/api-caller.js';
import { fromRouterError, gatewayError, type GatewayError } from '../http/errors.js';
import { sendJson } from '../http/respond.js';
import { Exchange } from './exchange.js';
import { aliasRefusal } from './key-policy.js';
import { MESSAGES } from './messages.js';
import { fail, guardedBody } from './routed-pipeline.js';

export async function handleCountTokens(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  startedAt: number,
  caller: ApiCaller | null,
): Promise<void> {
  const ex = new Exchange(requestId, startedAt, MESSAGES, caller);
  const body = await guardedBody(MESSAGES, ctx, req, res, ex);
  if (body === undefined) return;
  const decoded = decodeCountTokensRequest(body.value, body);
  if (!decoded.ok) return fail(MESSAGES, ctx, res, ex, gatewayError(decoded.error.code, decoded.error.message, { param: decoded.error.param }));
  const refused = aliasRefusal(caller, decoded.model, 'chat');
  if (refused !== undefined) return fail(MESSAGES, ctx, res, ex, refused);
  let count: TokenCount;
  try {
    count = ctx.router.countTokens({ model: decoded.model, operation: 'chat', body: decoded.body, source: decoded.source, nativeOnly: decoded.nativeOnly, stream: false });
  } catch (error) {
    if (!isRouterError(error)) throw error;
    return fail(MESSAGES, ctx, res, ex, fromRouterError(error, decoded.model));
  }
  sendJson(res, ctx.state, 200, { input_tokens: count.inputTokens }, ex.headers());
}

/** A request the auth step refused, answered in Anthropic's shape like the rest of this route. */
export function refuseCountTokens(ctx: GatewayContext, res: ServerResponse, requestId: string, startedAt: number, error: GatewayError): void {
  fail(MESSAGES, ctx, res, new Exchange(requestId, startedAt, MESSAGES, null), error);
}
