import type { Adapter } from '../adapters/adapter.js';
import type { ChatRequestBody, ProviderConfig, RouterRequest, SourceRequest } from '../types.js';

/**
 * What a chat request's parameters mean for one target, from its protocol's
 * table of parameters it cannot honour (adapters/*-parameters.ts, the one
 * declaration) and the ones its provider declares its server refuses
 * (`unsupported_parameters`, ProviderConfig):
 *
 *   refused   the request asks for a parameter the protocol cannot honour:
 *             the target is skipped (`unsupported_parameter`), never sent a
 *             request it would answer as if it had been honoured;
 *   trimmed   every such parameter is one the request marks optional
 *             (RouterRequest.optionalParameters, a hint such as a Responses
 *             request's `reasoning_effort`, which Codex sends by default): the
 *             target gets the request without them, and `dropped` says which,
 *             for the attempt's detail;
 *   as sent   nothing to refuse or drop (by far the common case: no copy).
 */
export type TargetParameters =
  | { readonly kind: 'as_sent' }
  | { readonly kind: 'refused'; readonly param: string }
  | { readonly kind: 'trimmed'; readonly body: ChatRequestBody; readonly dropped: readonly string[] };

export const AS_SENT: TargetParameters = Object.freeze({ kind: 'as_sent' });

export function targetParameters(adapter: Adapter, provider: ProviderConfig, request: RouterRequest): TargetParameters {
  const body = request.body as ChatRequestBody;
  let param = unsupportedParameter(adapter, provider, body, request.source);
  if (param === undefined) return AS_SENT;
  const optional = request.optionalParameters;
  if (optional === undefined || !optional.includes(param)) return { kind: 'refused', param };
  const trimmed: ChatRequestBody = { ...body };
  const dropped: string[] = [];
  // Each round drops one optional parameter; a table names each parameter once, so this ends.
  while (param !== undefined) {
    if (!optional.includes(param) || dropped.includes(param)) return { kind: 'refused', param };
    delete trimmed[param];
    dropped.push(param);
    param = unsupportedParameter(adapter, provider, trimmed, request.source);
  }
  return { kind: 'trimmed', body: trimmed, dropped };
}

/** The first parameter of `body` the target cannot honour: its protocol's refusal, else one its provider declares. Absent and `null` values ask for nothing. */
function unsupportedParameter(adapter: Adapter, provider: ProviderConfig, body: ChatRequestBody, source: SourceRequest | undefined): string | undefined {
  const refused = adapter.unsupportedParameter(body, source);
  if (refused !== undefined) return refused;
  for (const param of provider.unsupportedParameters) {
    if (body[param] !== undefined && body[param] !== null) return param;
  }
  return undefined;
}

/** The attempt's detail for a target that got the request without some optional parameters. */
export function droppedDetail(provider: ProviderConfig, dropped: readonly string[]): string {
  return `${cannotHonour(provider, dropped)}: sent without it (optional)`;
}

/** `anthropic cannot honour \`seed\``: who cannot honour a parameter (the protocol, or the provider that declares it). */
export function cannotHonour(provider: ProviderConfig, params: readonly string[]): string {
  const named = params.map((p) => `\`${p}\``).join(', ');
  return params.every((p) => provider.unsupportedParameters.includes(p)) ? `${provider.name} (unsupported_parameters) cannot honour ${named}` : `${provider.type} cannot honour ${named}`;
}
