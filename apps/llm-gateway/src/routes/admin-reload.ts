/**
 * POST /admin/reload: re-reads the config file, like SIGHUP. The route table's
 * `admin` auth step runs first (401 without the admin key, 403 with a wrong one
 * or when no admin key is configured). 200 with `{ok: true}` when swapped; 422 with the error when the file is
 * invalid (the old config keeps serving).
 */
import type { ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
import { sendJson } from '../http/respond.js';

export async function handleAdminReload(ctx: GatewayContext, res: ServerResponse, requestId: string): Promise<void> {
  const headers = { 'x-request-id': requestId };
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
