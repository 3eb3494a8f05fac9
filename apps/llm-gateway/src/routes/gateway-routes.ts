/**
 * Every route the gateway serves, with its methods and auth, in one table.
 * A new route is one entry here, its handler one function of the call
 * (`call.ts`); the server does matching, 404/405, auth, the error funnel and
 * finishing every call (`server.ts`, `http/route-table.ts`, `finish-call.ts`).
 */
import { RouteTable, type Route } from '../http/route-table.js';
import { CONFIG_HISTORY_ROUTES } from './admin-config-history.js';
import { ADMIN_KEY_ROUTES } from './admin-keys.js';
import { handleAdminReload } from './admin-reload.js';
import { ADMIN_RESOURCE_ROUTES } from './admin-resources.js';
import { LITELLM_MODEL_ROUTES } from './litellm-models.js';
import { handleAliases } from './aliases.js';
import { handleUsageErrors, handleUsageRequests, handleUsageSummary } from './admin-usage.js';
import { CHAT_COMPLETIONS } from '../dialects/openai/chat-completions.js';
import { COUNT_TOKENS, handleCountTokens } from '../dialects/anthropic/count-tokens.js';
import { DASHBOARD_ROUTES } from './dashboard.js';
import { EMBEDDINGS } from '../dialects/openai/embeddings.js';
import { handleHealth, handleProbeNow } from './health.js';
import { MESSAGES } from '../dialects/anthropic/messages.js';
import { handleMetrics } from './metrics.js';
import { handleModel, handleModels } from './models.js';
import { handleHealthz, handleReadyz } from './probes.js';
import { handleStoredResponse, RESPONSES, STORED_RESPONSES } from '../dialects/responses/responses.js';
import { handleRouted } from '../pipeline/routed-pipeline.js';
import type { InboundCodec } from '../dialects/codec.js';

/**
 * A route through the router (chat completions, embeddings, messages,
 * responses): its codec is its inbound API, so the server counts, records and
 * logs every request it receives, refusals included.
 */
export function routed(codec: InboundCodec): Omit<Route, 'path'> {
  return { method: 'POST', auth: 'api_key', inbound: codec, handler: (call) => handleRouted(codec, call) };
}

const chatCompletions = routed(CHAT_COMPLETIONS);
const embeddings = routed(EMBEDDINGS);
const messages = routed(MESSAGES);
const responses = routed(RESPONSES);
const storedResponse: Omit<Route, 'path'> = {
  method: ['GET', 'DELETE', 'POST'],
  auth: 'api_key',
  dialect: STORED_RESPONSES,
  handler: handleStoredResponse,
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
  // Calls no upstream, yet an inbound API of its own: counted, recorded and logged like the routed ones.
  { method: 'POST', path: COUNT_TOKENS.path, auth: 'api_key', inbound: COUNT_TOKENS, handler: handleCountTokens },
  { method: ['GET', 'HEAD'], path: '/healthz', auth: 'none', handler: handleHealthz },
  { method: ['GET', 'HEAD'], path: '/readyz', auth: 'none', handler: handleReadyz },
  { method: 'GET', path: '/metrics', auth: 'none', handler: handleMetrics },
  { method: 'POST', path: '/admin/reload', auth: 'admin', handler: handleAdminReload },
  { method: 'GET', path: '/admin/usage/requests', auth: 'admin', handler: handleUsageRequests },
  { method: 'GET', path: '/admin/usage/summary', auth: 'admin', handler: handleUsageSummary },
  { method: 'GET', path: '/admin/usage/errors', auth: 'admin', handler: handleUsageErrors },
  { method: 'GET', path: '/v1/models', auth: 'api_key', handler: handleModels },
  { method: 'GET', path: '/models', auth: 'api_key', handler: handleModels },
  { method: 'GET', path: '/v1/models/:id', auth: 'api_key', handler: handleModel },
  { method: 'GET', path: '/v1/aliases', auth: 'api_key_or_admin', handler: handleAliases },
  { method: 'GET', path: '/v1/health', auth: 'api_key_or_admin', handler: handleHealth },
  { method: 'POST', path: '/admin/health/probe', auth: 'admin', handler: handleProbeNow },
  ...DASHBOARD_ROUTES,
  ...ADMIN_RESOURCE_ROUTES,
  ...CONFIG_HISTORY_ROUTES,
  ...ADMIN_KEY_ROUTES,
  ...LITELLM_MODEL_ROUTES,
];

export function gatewayRouteTable(): RouteTable {
  return new RouteTable(GATEWAY_ROUTES);
}
