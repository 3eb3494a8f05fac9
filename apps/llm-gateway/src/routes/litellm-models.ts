/**
 * LiteLLM-compatible model management routes, for tooling written against a
 * LiteLLM proxy. The admin key is LiteLLM's master key (`Authorization:
 * Bearer` or `x-api-key`); errors have LiteLLM's shape,
 * `{"error": {message, type, param, code}}`, with `code` the HTTP status as a
 * string (as LiteLLM sends it) and `type` the gateway's stable code.
 */
import type { IncomingMessage } from 'node:http';
import type { GatewayContext } from '../context.js';
import { AdminFailure } from '../admin/admin-failure.js';
import type { GatewayError } from '../http/errors.js';
import type { Dialect } from '../dialects/dialect.js';
import type { Route, RouteHandler } from '../http/route-table.js';
import { deleteModel, modelGroupInfo, modelInfo, newModel, updateModel } from '../litellm/litellm-operations.js';
import { adminBody, answerAdmin, writeRequest } from './admin-resources.js';
import { paramsOf } from '../http/url.js';

/** LiteLLM's error body for a gateway error. */
export function litellmError(error: GatewayError): { error: { message: string; type: string; param: string | null; code: string } } {
  return { error: { message: error.message, type: error.code, param: error.param ?? null, code: String(error.status) } };
}

/** LiteLLM's error shape on every route here, the master key's refusals included; a 409 guard keeps its `held_by` list. */
const LITELLM: Dialect = {
  requestIdHeaders: [],
  encodeError: (error) => {
    const body = litellmError(error);
    return JSON.stringify(error.heldBy === undefined ? body : { error: { ...body.error, held_by: error.heldBy } });
  },
};

function query(req: IncomingMessage, name: string): string | undefined {
  return paramsOf(req).get(name) ?? undefined;
}

const snapshotOf = (ctx: GatewayContext) => () => ctx.router.config;

const info: RouteHandler = (call) => answerAdmin(call, () => modelInfo(call.ctx.configStore, call.ctx.router.config, query(call.req, 'litellm_model_id')));

export const LITELLM_MODEL_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/model/new',
    auth: 'master_key',
    dialect: LITELLM,
    handler: (call) => answerAdmin(call, async () => newModel(call.ctx.configStore, writeRequest(call.req), snapshotOf(call.ctx), await adminBody(call.req))),
  },
  {
    method: 'POST',
    path: '/model/update',
    auth: 'master_key',
    dialect: LITELLM,
    handler: (call) =>
      answerAdmin(call, async () => updateModel(call.ctx.configStore, writeRequest(call.req), snapshotOf(call.ctx), undefined, await adminBody(call.req))),
  },
  {
    method: 'PATCH',
    path: '/model/:id',
    auth: 'master_key',
    dialect: LITELLM,
    handler: (call) =>
      answerAdmin(call, async () => {
        // `/model/{id}/update`: the table's param takes the rest of the path.
        const rest = call.params.id ?? '';
        const id = rest.endsWith('/update') ? rest.slice(0, -'/update'.length) : undefined;
        if (id === undefined || id === '' || id.includes('/')) throw new AdminFailure('not_found', 'Use PATCH /model/{id}/update.');
        return updateModel(call.ctx.configStore, writeRequest(call.req), snapshotOf(call.ctx), id, await adminBody(call.req));
      }),
  },
  {
    method: 'POST',
    path: '/model/delete',
    auth: 'master_key',
    dialect: LITELLM,
    handler: (call) => answerAdmin(call, async () => deleteModel(call.ctx.configStore, writeRequest(call.req), snapshotOf(call.ctx), await adminBody(call.req))),
  },
  { method: 'GET', path: '/model/info', auth: 'master_key', dialect: LITELLM, handler: info },
  { method: 'GET', path: '/v1/model/info', auth: 'master_key', dialect: LITELLM, handler: info },
  {
    method: 'GET',
    path: '/model_group/info',
    auth: 'master_key',
    dialect: LITELLM,
    handler: (call) => answerAdmin(call, () => modelGroupInfo(call.ctx.configStore, call.ctx.router.config, query(call.req, 'model_group'))),
  },
];
