/**
 * POST /admin/reload: re-reads the config file, like SIGHUP. The route table's
 * `admin` auth step runs first (401 without the admin key, 403 with a wrong one
 * or when no admin key is configured). 200 with `{ok: true}` when swapped; 422 with the error when the file is
 * invalid (the old config keeps serving).
 */
import type { Call } from '../call.js';

export async function handleAdminReload(call: Call): Promise<void> {
  const { ctx } = call;
  const result = await ctx.reload('admin');
  const snapshot = ctx.router.config;
  call.json(
    result.ok ? 200 : 422,
    result.ok
      ? { ok: true, source: result.source, loaded_at: new Date(snapshot.loadedAt).toISOString(), aliases: [...snapshot.aliases.keys()] }
      : { ok: false, source: result.source, error: result.error },
  );
}
