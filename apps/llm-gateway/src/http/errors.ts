/**
 * OpenAI-shaped error bodies with stable codes: `{"error": {message, type, code, attempts}}`.
 * Clients switch on `code`; messages are for humans and never carry secrets.
 */
import type { AliasKind, Attempt, RequestOutcome, RouterError, RouterErrorCode } from '@mana/llm-router';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'api_error';

/**
 * Every code the gateway itself produces, with its HTTP status and type. Two
 * more reach clients and the records without being the gateway's own, so they
 * are not in this table: `upstream_error`, the code of an upstream refusal
 * whose body was not JSON (wrapped by upstream-error-body.ts, the upstream's
 * status kept), and `upstream_<status>` (e.g. `upstream_422`), the `code` that
 * the log line and the usage record give a relayed upstream refusal.
 */
export const GATEWAY_ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_utf8: { status: 400, type: 'invalid_request_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  missing_messages: { status: 400, type: 'invalid_request_error' },
  empty_input: { status: 400, type: 'invalid_request_error' },
  alias_kind_mismatch: { status: 400, type: 'invalid_request_error' },
  batch_too_large: { status: 400, type: 'invalid_request_error' },
  invalid_type: { status: 400, type: 'invalid_request_error' },
  invalid_header: { status: 400, type: 'invalid_request_error' },
  invalid_model: { status: 400, type: 'invalid_request_error' },
  bad_request: { status: 400, type: 'invalid_request_error' },
  unknown_field: { status: 400, type: 'invalid_request_error' },
  invalid_name: { status: 400, type: 'invalid_request_error' },
  too_many_targets: { status: 400, type: 'invalid_request_error' },
  // Service keys (admin API, routes/admin-keys.ts).
  invalid_key_field: { status: 400, type: 'invalid_request_error' },
  unknown_alias: { status: 400, type: 'invalid_request_error' },
  key_not_found: { status: 404, type: 'not_found_error' },
  key_name_taken: { status: 409, type: 'invalid_request_error' },
  key_read_only: { status: 409, type: 'invalid_request_error' },
  key_limit_reached: { status: 409, type: 'invalid_request_error' },
  shared_state_unavailable: { status: 503, type: 'api_error' },
  // A service key's policy (pipeline/key-policy.ts), before any upstream call.
  alias_not_allowed: { status: 403, type: 'permission_error' },
  key_concurrency_exceeded: { status: 429, type: 'rate_limit_error' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error' },
  invalid_schema: { status: 400, type: 'invalid_request_error' },
  schema_too_large: { status: 400, type: 'invalid_request_error' },
  schema_checks_busy: { status: 429, type: 'rate_limit_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  missing_admin_key: { status: 401, type: 'authentication_error' },
  invalid_admin_key: { status: 403, type: 'permission_error' },
  admin_disabled: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  invalid_usage_query: { status: 400, type: 'invalid_request_error' },
  usage_disabled: { status: 404, type: 'not_found_error' },
  usage_store_unavailable: { status: 503, type: 'api_error' },
  shared_config_unavailable: { status: 503, type: 'api_error' },
  model_not_found: { status: 404, type: 'invalid_request_error' },
  config_version_not_found: { status: 404, type: 'not_found_error' },
  alias_not_found: { status: 404, type: 'not_found_error' },
  provider_not_found: { status: 404, type: 'not_found_error' },
  target_not_found: { status: 404, type: 'not_found_error' },
  provider_in_use: { status: 409, type: 'invalid_request_error' },
  alias_required: { status: 409, type: 'invalid_request_error' },
  name_conflict: { status: 409, type: 'invalid_request_error' },
  config_read_only: { status: 409, type: 'invalid_request_error' },
  version_conflict: { status: 412, type: 'invalid_request_error' },
  invalid_config: { status: 422, type: 'invalid_request_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  unsupported_parameter: { status: 400, type: 'invalid_request_error' },
  unsupported_request: { status: 400, type: 'invalid_request_error' },
  // The Responses API is served stateless (dialects/responses/responses.ts): what needs a stored response is refused by name.
  unsupported_tool: { status: 400, type: 'invalid_request_error' },
  previous_response_not_supported: { status: 400, type: 'invalid_request_error' },
  conversation_not_supported: { status: 400, type: 'invalid_request_error' },
  background_not_supported: { status: 400, type: 'invalid_request_error' },
  response_storage_not_supported: { status: 400, type: 'invalid_request_error' },
  client_closed_request: { status: 499, type: 'invalid_request_error' },
  internal_error: { status: 500, type: 'api_error' },
  upstream_failed: { status: 502, type: 'api_error' },
  stream_interrupted: { status: 502, type: 'api_error' },
  no_healthy_provider: { status: 503, type: 'api_error' },
  shutting_down: { status: 503, type: 'api_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS;

/** An attempt as clients see it in errors (snake_case, no secrets). */
export interface AttemptJson {
  target: string;
  outcome: string;
  reason: string;
  status?: number;
  duration_ms: number;
  failed_over: boolean;
  detail?: string;
}

export interface GatewayError {
  readonly status: number;
  readonly code: GatewayErrorCode;
  readonly message: string;
  readonly param?: string | undefined;
  /** What the router reported: its attempts go into the body, its `retryAfterSeconds` into `Retry-After`. */
  readonly outcome?: RequestOutcome | undefined;
  /** For a 409 guard: what holds the resource (aliases using a provider, the package requiring an alias). */
  readonly heldBy?: readonly string[] | undefined;
}

export function attemptJson(attempt: Attempt): AttemptJson {
  const out: AttemptJson = {
    target: attempt.target,
    outcome: attempt.outcome,
    reason: attempt.reason,
    duration_ms: Math.round(attempt.durationMs * 10) / 10,
    failed_over: attempt.failedOver,
  };
  if (attempt.status !== undefined) out.status = attempt.status;
  if (attempt.detail !== undefined) out.detail = attempt.detail;
  return out;
}

export function gatewayError(code: GatewayErrorCode, message: string, extra: Partial<GatewayError> = {}): GatewayError {
  return { status: GATEWAY_ERRORS[code].status, code, message, ...extra };
}

/** The JSON text of an OpenAI-shaped error body. */
export function errorBody(error: GatewayError): string {
  return JSON.stringify({
    error: {
      message: error.message,
      type: GATEWAY_ERRORS[error.code].type,
      code: error.code,
      param: error.param ?? null,
      attempts: (error.outcome?.attempts ?? []).map(attemptJson),
      ...(error.heldBy === undefined ? {} : { held_by: error.heldBy }),
    },
  });
}

function aliasList(aliases: readonly string[]): string {
  return aliases.length === 0 ? '(none configured)' : aliases.join(', ');
}

/** 404 for a model id that is neither an alias nor (for chat) a configured provider/model; the message lists the aliases. */
export function modelNotFound(model: string, aliases: readonly string[], orElse = ''): GatewayError {
  return gatewayError(
    'model_not_found',
    `The model '${model.slice(0, 200)}' does not exist. Use one of the aliases: ${aliasList(aliases)}${orElse}.`,
    { param: 'model' },
  );
}

/**
 * The one table from the router's codes (what happened) to the gateway's
 * (what a client is told); `GATEWAY_ERRORS` then gives each its HTTP status.
 */
const FROM_ROUTER = {
  invalid_config: 'internal_error',
  unknown_model: 'model_not_found',
  invalid_request: 'invalid_request',
  alias_kind_mismatch: 'alias_kind_mismatch',
  batch_too_large: 'batch_too_large',
  context_length_exceeded: 'context_length_exceeded',
  invalid_schema: 'invalid_schema',
  schema_too_large: 'schema_too_large',
  schema_checks_busy: 'schema_checks_busy',
  unsupported_parameter: 'unsupported_parameter',
  unsupported_request: 'unsupported_request',
  no_healthy_provider: 'no_healthy_provider',
  upstream_failed: 'upstream_failed',
  stream_interrupted: 'stream_interrupted',
  aborted: 'client_closed_request',
  // The gateway closes its router only after its server stopped taking requests.
  router_closed: 'shutting_down',
} as const satisfies Record<RouterErrorCode, GatewayErrorCode>;

/** Client-facing text where the router's own description is not what a client should read. */
function messageOf(error: RouterError, code: GatewayErrorCode, requestedModel: string | undefined): string {
  switch (code) {
    case 'model_not_found':
      return modelNotFound(requestedModel ?? '', error.knownAliases, ' (or a configured provider/model)').message;
    case 'unsupported_parameter': {
      // Each target with what it cannot do (its own protocol, a hosted tool): never a kind the alias does not have.
      const targets = error.outcome.attempts.map((a) => (a.detail === undefined ? a.target : `${a.target}: ${a.detail}`)).join('; ');
      return `No target can honour the parameter '${error.param ?? ''}' (${targets}). Remove it or use another model.`;
    }
    case 'alias_kind_mismatch':
      return kindMismatchMessage(error);
    case 'client_closed_request':
      return 'The client closed the request.';
    case 'internal_error':
      return 'The gateway could not process the request.';
    case 'shutting_down':
      return 'The gateway is shutting down; retry the request.';
    default:
      return error.message;
  }
}

/** Where each kind of alias is served: the router names kinds, the gateway its own paths. */
const ROUTE_OF_KIND = { chat: '/v1/chat/completions', embedding: '/v1/embeddings' } as const satisfies Record<AliasKind, string>;

/** An alias on the other kind's route, told with the route that serves it. */
function kindMismatchMessage(error: RouterError): string {
  const kind = error.aliasKind;
  const name = error.outcome.alias;
  if (kind === undefined || name === undefined) return error.message;
  const wanted = kind === 'chat' ? 'embedding' : 'chat';
  const fitting = error.knownAliases.length === 0 ? 'none configured' : error.knownAliases.join(', ');
  return `${name} is ${kind === 'embedding' ? 'an embedding' : 'a chat'} alias: use it on ${ROUTE_OF_KIND[kind]} (${wanted} aliases: ${fitting})`;
}

/** Maps a RouterError to what the client sees; its outcome travels along unchanged. */
export function fromRouterError(error: RouterError, requestedModel: string | undefined): GatewayError {
  const code: GatewayErrorCode = FROM_ROUTER[error.code] ?? 'internal_error';
  const param = code === 'model_not_found' ? 'model' : error.param;
  return gatewayError(code, messageOf(error, code, requestedModel), { param, outcome: error.outcome });
}
