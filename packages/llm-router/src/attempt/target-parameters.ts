import type { Adapter } from '../adapters/adapter.js';
import type { ChatRequestBody, RouterRequest } from '../types.js';

/**
 * What a chat request's parameters mean for one target, from its protocol's
 * table of parameters it cannot honour (adapters/*-parameters.ts, the one
 * declaration):
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

export function targetParameters(adapter: Adapter, request: RouterRequest): TargetParameters {
  const body = request.body as ChatRequestBody;
  let param = adapter.unsupportedParameter(body, request.source);
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
    param = adapter.unsupportedParameter(trimmed, request.source);
  }
  return { kind: 'trimmed', body: trimmed, dropped };
}

/** The attempt's detail for a target that got the request without some optional parameters. */
export function droppedDetail(providerType: string, dropped: readonly string[]): string {
  return `${providerType} cannot honour ${dropped.map((p) => `\`${p}\``).join(', ')}: sent without it (optional)`;
}
