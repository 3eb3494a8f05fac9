/**
 * The service key API (admin key; keys live in the usage store):
 *   GET  /admin/keys                  every key: MANA_LLM_API_KEYS as read-only env-1, env-2, …, then the service keys
 *   POST /admin/keys                  creates a key; the answer carries its secret (`key`) once
 *   GET|PATCH|DELETE /admin/keys/{id} one key; PATCH is a merge patch of its fields
 *   POST /admin/keys/{id}/rotate      a new secret (`key`, once); the old one works for `grace` (default 24 h)
 * Answers are never cached (`Cache-Control: no-store`): two of them carry a secret.
 * The work is in ../admin/key-operations.ts.
 */
import type { IncomingMessage } from 'node:http';
import type { Call } from '../call.js';
import type { GatewayContext } from '../context.js';
import { AdminFailure } from '../admin/admin-failure.js';
import { createKey, deleteKey, getKey, listKeys, patchKey, rotateServiceKey, type KeyAnswer, type KeyContext } from '../admin/key-operations.js';
import type { Route } from '../http/route-table.js';
import { pathOf } from '../http/url.js';
import { adminBody, answerAdmin } from './admin-resources.js';

const KEYS = '/admin/keys';
const ROTATE = '/rotate';

function keyContext(ctx: GatewayContext): KeyContext {
  return { keys: ctx.serviceKeys, config: () => ctx.router.config, shared: ctx.serviceKeys.store.kind === 'postgres' };
}

function answer(call: Call, work: (keys: KeyContext) => Promise<KeyAnswer> | KeyAnswer): Promise<void> {
  call.res.setHeader('cache-control', 'no-store');
  return answerAdmin(call, async () => work(keyContext(call.ctx)));
}

/** The id from the raw path (not the table's decoded param: `%2F` must not become a slash). */
function idOf(req: IncomingMessage): string {
  return pathOf(req.url).slice(KEYS.length + 1);
}

/** A rotation's body is optional: none (or an empty one) means the default grace. */
async function optionalBody(req: IncomingMessage): Promise<unknown> {
  const length = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (!chunked && (length === undefined || length === '0') && req.headers['content-type'] === undefined) return undefined;
  return adminBody(req);
}

export const ADMIN_KEY_ROUTES: readonly Route[] = [
  { method: 'GET', path: KEYS, auth: 'admin', handler: (call) => answer(call, (keys) => listKeys(keys)) },
  {
    method: 'POST',
    path: KEYS,
    auth: 'admin',
    handler: (call) => answer(call, async (keys) => createKey(keys, await adminBody(call.req))),
  },
  { method: 'GET', path: `${KEYS}/:id`, auth: 'admin', handler: (call) => answer(call, (keys) => getKey(keys, idOf(call.req))) },
  {
    method: 'PATCH',
    path: `${KEYS}/:id`,
    auth: 'admin',
    handler: (call) => answer(call, async (keys) => patchKey(keys, idOf(call.req), await adminBody(call.req))),
  },
  { method: 'DELETE', path: `${KEYS}/:id`, auth: 'admin', handler: (call) => answer(call, (keys) => deleteKey(keys, idOf(call.req))) },
  {
    // The table's :param takes the rest of the path, so /admin/keys/{id}/rotate arrives here.
    method: 'POST',
    path: `${KEYS}/:id`,
    auth: 'admin',
    handler: (call) =>
      answer(call, async (keys) => {
        const rest = idOf(call.req);
        if (!rest.endsWith(ROTATE)) throw new AdminFailure('method_not_allowed', 'Use GET, PATCH or DELETE on /admin/keys/{id}, and POST on /admin/keys/{id}/rotate.');
        return rotateServiceKey(keys, rest.slice(0, -ROTATE.length), await optionalBody(call.req));
      }),
  },
];
