/**
 * POST /admin/reload: re-reads the config file, like SIGHUP. Needs the admin key
 * (401 without one, 403 with a wrong one or when no admin key is configured).
 * 200 with `{ok: true}` when swapped; 422 with the error when the file is
 * invalid (the old config keeps serving).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
import { gatewayError } from '../http/errors.js';
import { sendError, sendJson } from '../http/respond.js';

export async function handleAdminReload(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
): Promise<void> {
  const headers = { 'x-request-id': requestId };
  if (ctx.adminKey === undefined) {
    sendError(res, ctx.state, gatewayError('admin_disabled', 'Admin routes are disabled: set MANA_LLM_ADMIN_KEY to enable them.'), headers);
    return;
  }
  const auth = ctx.adminKey.check(req.headers.authorization);
  if (auth === 'missing') {
    sendError(res, ctx.state, gatewayError('missing_admin_key', 'Missing admin key: send "Authorization: Bearer <admin key>".'), headers);
    return;
  }
  if (auth === 'invalid') {
    sendError(res, ctx.state, gatewayError('invalid_admin_key', 'Invalid admin key.'), headers);
    return;
  }
  const result = await ctx.reload('admin');
  const snapshot = ctx.router.config;
  sendJson(
    res,
    ctx.state,
    result.ok ? 200 : 422,
    result.ok
      ? { ok: true, source: result.source, loaded_at: new Date(snapshot.loadedAt).toISOString(), aliases: [...snapshot.aliases.keys()] }
      : { ok: false, source: result.source, error: result.error },
    headers,
  );
}
