/**
 * LiteLLM-compatible model management routes, for tooling written against a
 * LiteLLM proxy. The admin key is LiteLLM's master key (`Authorization:
 * Bearer` or `x-api-key`); errors have LiteLLM's shape,
 * `{"error": {message, type, param, code}}`, with `code` the HTTP status as a
 * string (as LiteLLM sends it) and `type` the gateway's stable code.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
import { AdminFailure } from '../admin/admin-failure.js';
import type { Answer } from '../admin/alias-operations.js';
import type { GatewayError } from '../http/errors.js';
import { sendJson } from '../http/respond.js';
import type { Route } from '../http/route-table.js';
import { deleteModel, modelGroupInfo, modelInfo, newModel, updateModel } from '../litellm/litellm-operations.js';
import { adminBody, answerAdmin, writeRequest, type FailureWriter } from './admin-resources.js';
import { paramsOf } from '../http/url.js';

/** LiteLLM's error body for a gateway error. */
export function litellmError(error: GatewayError): { error: { message: string; type: string; param: string | null; code: string } } {
  return { error: { message: error.message, type: error.code, param: error.param ?? null, code: String(error.status) } };
}

/** LiteLLM's error shape; a 409 guard keeps its `held_by` list. */
const sendLitellmError: FailureWriter = (ctx, res, error, headers) => {
  const body = litellmError(error);
  sendJson(res, ctx.state, error.status, error.heldBy === undefined ? body : { error: { ...body.error, held_by: error.heldBy } }, headers);
};

function answer(ctx: GatewayContext, req: IncomingMessage, res: ServerResponse, requestId: string, work: () => Promise<Answer>): Promise<void> {
  return answerAdmin(ctx, req, res, requestId, work, sendLitellmError);
}

function query(req: IncomingMessage, name: string): string | undefined {
  return paramsOf(req).get(name) ?? undefined;
}

const refused: Route['refused'] = (ctx, _req, res, requestId, _startedAt, error) => sendLitellmError(ctx, res, error, { 'x-request-id': requestId });

const snapshotOf = (ctx: GatewayContext) => () => ctx.router.config;

const info: Route['handler'] = (ctx, req, res, requestId) =>
  answer(ctx, req, res, requestId, () => modelInfo(ctx.configStore, ctx.router.config, query(req, 'litellm_model_id')));

export const LITELLM_MODEL_ROUTES: readonly Route[] = [
  {
    method: 'POST',
    path: '/model/new',
    auth: 'master_key',
    refused,
    handler: (ctx, req, res, requestId) => answer(ctx, req, res, requestId, async () => newModel(ctx.configStore, writeRequest(req), snapshotOf(ctx), await adminBody(req))),
  },
  {
    method: 'POST',
    path: '/model/update',
    auth: 'master_key',
    refused,
    handler: (ctx, req, res, requestId) =>
      answer(ctx, req, res, requestId, async () => updateModel(ctx.configStore, writeRequest(req), snapshotOf(ctx), undefined, await adminBody(req))),
  },
  {
    method: 'PATCH',
    path: '/model/:id',
    auth: 'master_key',
    refused,
    handler: (ctx, req, res, requestId, params) =>
      answer(ctx, req, res, requestId, async () => {
        // `/model/{id}/update`: the table's param takes the rest of the path.
        const rest = params.id ?? '';
        const id = rest.endsWith('/update') ? rest.slice(0, -'/update'.length) : undefined;
        if (id === undefined || id === '' || id.includes('/')) throw new AdminFailure('not_found', 'Use PATCH /model/{id}/update.');
        return updateModel(ctx.configStore, writeRequest(req), snapshotOf(ctx), id, await adminBody(req));
      }),
  },
  {
    method: 'POST',
    path: '/model/delete',
    auth: 'master_key',
    refused,
    handler: (ctx, req, res, requestId) => answer(ctx, req, res, requestId, async () => deleteModel(ctx.configStore, writeRequest(req), snapshotOf(ctx), await adminBody(req))),
  },
  { method: 'GET', path: '/model/info', auth: 'master_key', refused, handler: info },
  { method: 'GET', path: '/v1/model/info', auth: 'master_key', refused, handler: info },
  {
    method: 'GET',
    path: '/model_group/info',
    auth: 'master_key',
    refused,
    handler: (ctx, req, res, requestId) => answer(ctx, req, res, requestId, () => modelGroupInfo(ctx.configStore, ctx.router.config, query(req, 'model_group'))),
  },
];
