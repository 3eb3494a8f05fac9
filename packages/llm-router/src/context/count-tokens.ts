import type { Adapter } from '../adapters/adapter.js';
import { kindMismatch } from '../attempt/kind-mismatch.js';
import { precheck } from '../attempt/precheck.js';
import { resolveModel } from '../config/alias-registry.js';
import type { HealthCheck } from '../health/health-cache.js';
import type { ChatRequestBody, ConfigSnapshot, ProviderConfig, ProviderType, RouterRequest, TargetConfig } from '../types.js';
import { ContextFit } from './context-fit.js';
import { estimateTokens } from './estimate-tokens.js';
import { requestTokens } from './request-tokens.js';

/** A prompt's estimated size, and the target it was counted for. */
export interface TokenCount {
  /** Estimated prompt tokens (never 0 for a request with a message: the chat template alone costs some). */
  readonly inputTokens: number;
  /** The alias the request resolved to; undefined for a direct `provider/model`. */
  readonly alias: string | undefined;
  /** `provider/model` of the target counted for; undefined for an alias without targets. */
  readonly target: string | undefined;
}

/** What counting needs from the router: the same health pre-check and adapters the attempt loop asks. */
export interface CountDeps {
  readonly health: { check(target: TargetConfig, provider: ProviderConfig | undefined): HealthCheck };
  readonly adapters: { get(type: ProviderType): Adapter | undefined };
}

/** The estimated prompt tokens of a chat request: the estimate context fit checks windows with (context-fit.ts). */
export function estimatePromptTokens(body: ChatRequestBody): number {
  return requestTokens(body, estimateTokens);
}

/**
 * Counts a chat request's prompt as the target that would serve it sees it:
 * the first target of the alias, in listed order, that the attempt loop would
 * call now: the loop's own pre-call checks pass on a first walk (precheck.ts:
 * the prompt fits, configured, not blocked by health, able to honour every
 * parameter); the first listed one when none does. A query: nothing is sent,
 * nothing recorded, no round-robin counter moves. Throws the RouterError the
 * request would get from `execute` for an unknown model or an alias of
 * another kind.
 */
export function countTokens(snapshot: ConfigSnapshot, request: RouterRequest, deps: CountDeps): TokenCount {
  const { alias, config } = resolveModel(snapshot, request.model, 'chat');
  if (config.kind !== 'chat') throw kindMismatch(snapshot, config, 'chat', alias);
  const body = request.body as ChatRequestBody;
  const inputs = { snapshot, request, config, deps, fit: new ContextFit(body) };
  const target = config.chain.find((t) => precheck(inputs, t, 'first').kind === 'ready') ?? config.chain[0];
  return { inputTokens: estimatePromptTokens(body), alias, target: target?.id };
}
