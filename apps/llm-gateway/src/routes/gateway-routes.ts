/**
 * Every route the gateway serves, with its methods and auth, in one table.
 * A new route is one entry here; the server does matching, 404/405, auth and
 * the error funnel (`server.ts`, `http/route-table.ts`).
 */
import { RouteTable, type Route } from '../http/route-table.js';
import { CONFIG_HISTORY_ROUTES } from './admin-config-history.js';
import { ADMIN_KEY_ROUTES } from './admin-keys.js';
import { handleAdminReload } from './admin-reload.js';
import { ADMIN_RESOURCE_ROUTES } from './admin-resources.js';
import { LITELLM_MODEL_ROUTES } from './litellm-models.js';
import { handleAliases } from './aliases.js';
import { handleUsageErrors, handleUsageRequests, handleUsageSummary } from './admin-usage.js';
import { CHAT_COMPLETIONS } from './chat-completions.js';
import { handleCountTokens, refuseCountTokens } from './count-tokens.js';
import { DASHBOARD_ROUTES } from './dashboard.js';
import { EMBEDDINGS } from './embeddings.js';
import { handleHealth, handleProbeNow } from './health.js';
import { MESSAGES } from './messages.js';
import { handleMetrics } from './metrics.js';
import { handleModel, handleModels } from './models.js';
import { handleHealthz, handleReadyz } from './probes.js';
import { handleStoredResponse, RESPONSES } from './responses.js';
import { handleRouted } from './routed-pipeline.js';
import type { InboundCodec } from './inbound-codec.js';

/**
 * A route through the router (chat completions, embeddings, messages, responses): it counts and logs every request itself, refusals included.
 */
export function routed(codec: InboundCodec): Omit<Route, 'path'> {
  return {
    method: 'POST',
    auth: 'api_key',
    handler: (ctx, req, res, requestId, _params, startedAt, caller) => handleRouted(codec, ctx, req, res, requestId, startedAt, caller),
    refused: (ctx, req, res, requestId, startedAt, error) => handleRouted(codec, ctx, req, res, requestId, startedAt, null, error),
    logsItself: true,
  };
}

const chatCompletions = routed(CHAT_COMPLETIONS);
const embeddings = routed(EMBEDDINGS);
const messages = routed(MESSAGES);
const responses = routed(RESPONSES);
const storedResponse: Omit<Route, 'path'> = {
  method: ['GET', 'DELETE', 'POST'],
  auth: 'api_key',
  handler: (ctx, _req, res, requestId) => handleStoredResponse(ctx, res, requestId),
};

export const GATEWAY_ROUTES: readonly Route[] = [
  // The hot path first (declaration order only matters for the Allow header).
  { path: '/v1/chat/completions', ...chatCompletions },
  { path: '/chat/completions', ...chatCompletions },
  { path: '/v1/embeddings', ...embeddings },
  { path: '/embeddings', ...embeddings },
  { path: '/v1/messages', ...messages },
  { path: '/v1/responses', ...responses },
  { path: '/responses', ...responses },
  // Stateless: every path under a response id (input_items, cancel) says so, whatever the method asks.
  { path: '/v1/responses/:id', ...storedResponse },
  { path: '/responses/:id', ...storedResponse },
  {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    auth: 'api_key',
    handler: (ctx, req, res, requestId, _params, startedAt, caller) => handleCountTokens(ctx, req, res, requestId, startedAt, caller),
    refused: (ctx, _req, res, requestId, startedAt, error) => refuseCountTokens(ctx, res, requestId, startedAt, error),
  },
  { method: ['GET', 'HEAD'], path: '/healthz', auth: 'none', handler: (ctx, _req, res) => handleHealthz(ctx, res) },
  { method: ['GET', 'HEAD'], path: '/readyz', auth: 'none', handler: (ctx, _req, res) => handleReadyz(ctx, res) },
  { method: 'GET', path: '/metrics', auth: 'none', handler: (ctx, _req, res, requestId) => handleMetrics(ctx, res, requestId) },
  { method: 'POST', path: '/admin/reload', auth: 'admin', handler: (ctx, _req, res, requestId) => handleAdminReload(ctx, res, requestId) },
  { method: 'GET', path: '/admin/usage/requests', auth: 'admin', handler: (ctx, req, res, requestId) => handleUsageRequests(ctx, req, res, requestId) },
  { method: 'GET', path: '/admin/usage/summary', auth: 'admin', handler: (ctx, req, res, requestId) => handleUsageSummary(ctx, req, res, requestId) },
  { method: 'GET', path: '/admin/usage/errors', auth: 'admin', handler: (ctx, req, res, requestId) => handleUsageErrors(ctx, req, res, requestId) },
  { method: 'GET', path: '/v1/models', auth: 'api_key', handler: (ctx, _req, res, requestId) => handleModels(ctx, res, requestId) },
  { method: 'GET', path: '/models', auth: 'api_key', handler: (ctx, _req, res, requestId) => handleModels(ctx, res, requestId) },
  {
    method: 'GET',
    path: '/v1/models/:id',
    auth: 'api_key',
    handler: (ctx, _req, res, requestId, params) => handleModel(ctx, res, requestId, params.id!),
  },
  { method: 'GET', path: '/v1/aliases', auth: 'api_key_or_admin', handler: (ctx, _req, res, requestId) => handleAliases(ctx, res, requestId) },
  { method: 'GET', path: '/v1/health', auth: 'api_key_or_admin', handler: (ctx, _req, res, requestId) => handleHealth(ctx, res, requestId) },
  { method: 'POST', path: '/admin/health/probe', auth: 'admin', handler: (ctx, _req, res, requestId) => handleProbeNow(ctx, res, requestId) },
  ...DASHBOARD_ROUTES,
  ...ADMIN_RESOURCE_ROUTES,
  ...CONFIG_HISTORY_ROUTES,
  ...ADMIN_KEY_ROUTES,
  ...LITELLM_MODEL_ROUTES,
];

export function gatewayRouteTable(): RouteTable {
  return new RouteTable(GATEWAY_ROUTES);
}
