import type { Adapter } from '../adapters/adapter.js';
import type { ChatRequestBody, NativeOnlyPart, OriginalRequest, ProviderConfig, RouterRequest, TargetConfig } from '../types.js';

/**
 * What a chat request's parameters mean for one target, from its protocol's
 * table of parameters it cannot honour (adapters/*-parameters.ts, the one
 * declaration), the ones its provider declares its server refuses
 * (`unsupported_parameters`, ProviderConfig), and what only a target taking
 * the client's request natively can honour (RouterRequest.nativeOnly: hosted
 * tools):
 *
 *   refused   the request asks for a parameter the protocol cannot honour, or
 *             offers a hosted tool the target cannot run: the target is
 *             skipped (`unsupported_parameter`), never sent a request it would
 *             answer as if it had been honoured;
 *   trimmed   every such parameter is one the request marks optional
 *             (RouterRequest.optionalParameters, a hint such as a Responses
 *             request's `reasoning_effort`, which Codex sends by default), and
 *             every such tool is droppable under the target's `hosted_tools:
 *             drop`: the target gets the request without them, and `note`
 *             says which, for the attempt's detail (`droppedTools` also for
 *             the answer);
 *   as sent   nothing to refuse or drop (by far the common case: no copy).
 */
export type TargetParameters =
  | { readonly kind: 'as_sent' }
  | { readonly kind: 'refused'; readonly param: string; readonly detail: string }
  | { readonly kind: 'trimmed'; readonly body: ChatRequestBody; readonly note: string; readonly droppedTools: readonly string[] | undefined };

export const AS_SENT: TargetParameters = Object.freeze({ kind: 'as_sent' });

export function targetParameters(adapter: Adapter, provider: ProviderConfig, target: TargetConfig, request: RouterRequest): TargetParameters {
  const tools = hostedTools(adapter, provider, target, request);
  if (tools.kind === 'refused') return tools;
  const params = parameters(adapter, provider, request);
  if (params.kind === 'refused') return params;
  // By far the common case: nothing dropped, so no note to build and no copy.
  if (params.note === undefined && tools.note === undefined) return AS_SENT;
  const notes = [params.note, tools.note].filter((n) => n !== undefined);
  return { kind: 'trimmed', body: params.body, note: notes.join('; '), droppedTools: tools.dropped };
}

type Part<T> = { readonly kind: 'refused'; readonly param: string; readonly detail: string } | ({ readonly kind: 'ok'; readonly note: string | undefined } & T);

/** The request's parameters for this target: as sent, without the optional ones it cannot honour, or refused. */
function parameters(adapter: Adapter, provider: ProviderConfig, request: RouterRequest): Part<{ readonly body: ChatRequestBody }> {
  const body = request.body as ChatRequestBody;
  let param = unsupportedParameter(adapter, provider, body, request.original);
  if (param === undefined) return { kind: 'ok', body, note: undefined };
  const optional = request.optionalParameters;
  if (optional === undefined || !optional.includes(param)) return { kind: 'refused', param, detail: cannotHonour(provider, [param]) };
  const trimmed: ChatRequestBody = { ...body };
  const dropped: string[] = [];
  // Each round drops one optional parameter; a table names each parameter once, so this ends.
  while (param !== undefined) {
    if (!optional.includes(param) || dropped.includes(param)) return { kind: 'refused', param, detail: cannotHonour(provider, [param]) };
    delete trimmed[param];
    dropped.push(param);
    param = unsupportedParameter(adapter, provider, trimmed, request.original);
  }
  return { kind: 'ok', body: trimmed, note: `${cannotHonour(provider, dropped)}: sent without it (optional)` };
}

/** The request holds no hosted tools, or the target takes them natively: shared, as it never changes. */
const NO_HOSTED_TOOLS = Object.freeze({ kind: 'ok', note: undefined, dropped: undefined } as const);

/**
 * The request's hosted tools for this target: none, or it takes the request
 * natively (they go as the client wrote them); dropped (`hosted_tools: drop`,
 * every one droppable: the translated body never held them); else refused,
 * naming the first the target cannot take.
 */
function hostedTools(adapter: Adapter, provider: ProviderConfig, target: TargetConfig, request: RouterRequest): Part<{ readonly dropped: readonly string[] | undefined }> {
  const parts = request.nativeOnly;
  if (parts === undefined || parts.length === 0 || adapter.takesNatively(request.original)) return NO_HOSTED_TOOLS;
  const kept = target.settings.hostedTools === 'drop' ? parts.find((p) => !p.droppable) : parts[0];
  if (kept !== undefined) return { kind: 'refused', param: kept.param, detail: cannotRun(provider, kept) };
  const dropped = [...new Set(parts.map((p) => p.name))];
  return { kind: 'ok', note: `${provider.type} cannot offer ${named(parts, dropped)}: sent without ${dropped.length === 1 ? 'it' : 'them'} (hosted_tools: drop)`, dropped };
}

/** The first parameter of `body` the target cannot honour: its protocol's refusal, else one its provider declares. Absent and `null` values ask for nothing. */
function unsupportedParameter(adapter: Adapter, provider: ProviderConfig, body: ChatRequestBody, original: OriginalRequest | undefined): string | undefined {
  const refused = adapter.unsupportedParameter(body, original);
  if (refused !== undefined) return refused;
  for (const param of provider.unsupportedParameters) {
    if (body[param] !== undefined && body[param] !== null) return param;
  }
  return undefined;
}

/** `anthropic cannot honour \`seed\``: who cannot honour a parameter (the protocol, or the provider that declares it). */
function cannotHonour(provider: ProviderConfig, params: readonly string[]): string {
  const listed = params.map((p) => `\`${p}\``).join(', ');
  return params.every((p) => provider.unsupportedParameters.includes(p)) ? `${provider.name} (unsupported_parameters) cannot honour ${listed}` : `${provider.type} cannot honour ${listed}`;
}

/** `openai cannot offer the tool \`web_search\` (tools[0].type)`, and whether `hosted_tools: drop` would serve it. */
function cannotRun(provider: ProviderConfig, part: NativeOnlyPart): string {
  const why = part.droppable ? '; settings.hosted_tools: drop sends the request without it' : '';
  return `${provider.type} cannot offer ${named([part], [part.name])} (${part.param})${why}`;
}

/** `the tool \`web_search\``; without the noun when some are not tools (an earlier call's blocks in the conversation). */
function named(parts: readonly NativeOnlyPart[], names: readonly string[]): string {
  const listed = names.map((t) => `\`${t}\``).join(', ');
  if (!parts.every((p) => p.param.startsWith('tools['))) return listed;
  return `the tool${names.length === 1 ? '' : 's'} ${listed}`;
}
