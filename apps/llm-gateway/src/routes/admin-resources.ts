/**
 * The admin resource API (admin key, as POST /admin/reload):
 *   GET /admin/config
 *   GET /admin/aliases, GET|PUT|PATCH|DELETE /admin/aliases/{name}
 *   GET /admin/providers, GET|PUT|PATCH|DELETE /admin/providers/{name}
 * Every answer carries the config version as `ETag`; a write honours
 * `If-Match` (412 version_conflict). The work is done in ../admin/; these are
 * the route table's handlers.
 */
import type { IncomingMessage } from 'node:http';
import type { Call } from '../call.js';
import type { GatewayContext } from '../context.js';
import { AdminFailure, isAdminFailure } from '../admin/admin-failure.js';
import { deleteAlias, getAlias, listAliases, patchAlias, putAlias, type Answer } from '../admin/alias-operations.js';
import { etagOf, versionOf, type WriteRequest } from '../admin/config-store.js';
import type { KeyAnswer } from '../admin/key-operations.js';
import { redactedConfigText } from '../admin/config-view.js';
import { nameFromPath, type ResourceKind } from '../admin/names.js';
import { deleteProvider, getProvider, listProviders, patchProvider, putProvider } from '../admin/provider-operations.js';
import { BodyTooLarge, readJsonBody } from '../admin/read-json.js';
import { presentedKeyFingerprint } from '../http/admin-auth.js';
import { discardBodyThenClose } from '../http/linger.js';
import type { Route, RouteHandler } from '../http/route-table.js';
import { isJsonContentType } from '../http/request-headers.js';
import { pathOf } from '../http/url.js';

/**
 * Runs `work` and answers with its result (ETag included for a config
 * resource) or its refusal, in the route's dialect; anything else it throws
 * goes on to the server's error funnel (a 500).
 */
export async function answerAdmin(call: Call, work: () => Promise<Answer | KeyAnswer>): Promise<void> {
  let answer: Answer | KeyAnswer;
  try {
    answer = await work();
  } catch (error) {
    if (!isAdminFailure(error)) throw error;
    return refuse(call, error);
  }
  // Config resources carry the config version; service keys are not part of the config.
  call.json(answer.status, answer.body, 'version' in answer ? { etag: etagOf(answer.version) } : undefined);
}

function refuse(call: Call, failure: AdminFailure): void {
  if (failure.error.code === 'client_closed_request') return;
  if (failure instanceof BodyTooLarge) {
    // Answer and close; the rest of the body is read and discarded for a bounded while (linger.ts).
    call.error(failure.error, { connection: 'close' });
    discardBodyThenClose(call.req, call.res);
    return;
  }
  call.error(failure.error);
}

/** The JSON body of an admin write. */
export async function adminBody(req: IncomingMessage): Promise<unknown> {
  if (!isJsonContentType(req.headers['content-type'])) throw new AdminFailure('unsupported_media_type', 'Content-Type must be application/json.');
  return readJsonBody(req);
}

export function writeRequest(req: IncomingMessage): WriteRequest {
  const ifMatch = req.headers['if-match'];
  return {
    route: `${req.method ?? ''} ${pathOf(req.url).slice(0, 300)}`,
    ifMatch: typeof ifMatch === 'string' ? ifMatch : undefined,
    keyFingerprint: presentedKeyFingerprint(req),
  };
}

/**
 * The resource name from the raw request path, not the table's decoded
 * param: an encoded slash (`%2F`) must be refused, and decoding would hide it.
 */
function nameOf(req: IncomingMessage, prefix: string, kind: ResourceKind): string {
  return nameFromPath(pathOf(req.url).slice(prefix.length), kind);
}

type AdminWork = (ctx: GatewayContext, req: IncomingMessage, name: string) => Promise<Answer>;

function item(kind: ResourceKind, prefix: string, work: AdminWork): RouteHandler {
  return (call) => answerAdmin(call, async () => work(call.ctx, call.req, nameOf(call.req, prefix, kind)));
}

const ALIASES = '/admin/aliases/';
const PROVIDERS = '/admin/providers/';
const providersOf = (ctx: GatewayContext) => (): Iterable<string> => ctx.router.config.providers.keys();

export const ADMIN_RESOURCE_ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/admin/config',
    auth: 'admin',
    handler: (call) =>
      answerAdmin(call, async () => {
        const { ctx } = call;
        const current = await ctx.configStore.read();
        const loadedAt = new Date(ctx.router.config.loadedAt).toISOString();
        const text = redactedConfigText(current.text);
        if (ctx.configStore.mode === 'file') {
          return { status: 200, body: { mode: 'file', source: ctx.configStore.path, version: current.version, loaded_at: loadedAt, text }, version: current.version };
        }
        // Shared: the database holds the config; the file seeded it and is shown only to say whether a hand edit waits there, unapplied.
        const fileVersion = await ctx.configStore.readFile().then(versionOf, () => null);
        const file = { path: ctx.configStore.path, version: fileVersion, matches_shared: fileVersion === current.version };
        return { status: 200, body: { mode: 'shared', source: 'database', version: current.version, loaded_at: loadedAt, text, file }, version: current.version };
      }),
  },
  { method: 'GET', path: '/admin/aliases', auth: 'admin', handler: (call) => answerAdmin(call, () => listAliases(call.ctx.configStore)) },
  { method: 'GET', path: `${ALIASES}:name`, auth: 'admin', handler: item('alias', ALIASES, (ctx, _req, name) => getAlias(ctx.configStore, name)) },
  {
    method: 'PUT',
    path: `${ALIASES}:name`,
    auth: 'admin',
    handler: item('alias', ALIASES, async (ctx, req, name) => putAlias(ctx.configStore, writeRequest(req), name, await adminBody(req), providersOf(ctx))),
  },
  {
    method: 'PATCH',
    path: `${ALIASES}:name`,
    auth: 'admin',
    handler: item('alias', ALIASES, async (ctx, req, name) => patchAlias(ctx.configStore, writeRequest(req), name, await adminBody(req), providersOf(ctx))),
  },
  { method: 'DELETE', path: `${ALIASES}:name`, auth: 'admin', handler: item('alias', ALIASES, (ctx, req, name) => deleteAlias(ctx.configStore, writeRequest(req), name)) },
  {
    method: 'GET',
    path: '/admin/providers',
    auth: 'admin',
    handler: (call) => answerAdmin(call, () => listProviders(call.ctx.configStore, call.ctx.router.config)),
  },
  { method: 'GET', path: `${PROVIDERS}:name`, auth: 'admin', handler: item('provider', PROVIDERS, (ctx, _req, name) => getProvider(ctx.configStore, ctx.router.config, name)) },
  {
    method: 'PUT',
    path: `${PROVIDERS}:name`,
    auth: 'admin',
    handler: item('provider', PROVIDERS, async (ctx, req, name) => putProvider(ctx.configStore, writeRequest(req), name, await adminBody(req))),
  },
  {
    method: 'PATCH',
    path: `${PROVIDERS}:name`,
    auth: 'admin',
    handler: item('provider', PROVIDERS, async (ctx, req, name) => patchProvider(ctx.configStore, writeRequest(req), name, await adminBody(req))),
  },
  { method: 'DELETE', path: `${PROVIDERS}:name`, auth: 'admin', handler: item('provider', PROVIDERS, (ctx, req, name) => deleteProvider(ctx.configStore, writeRequest(req), name)) },
];
