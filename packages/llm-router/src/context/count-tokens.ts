import type { Adapter } from '../adapters/adapter.js';
import { kindMismatch } from '../attempt/kind-mismatch.js';
import { targetParameters } from '../attempt/target-parameters.js';
import { resolveModel } from '../config/alias-registry.js';
import type { HealthCheck } from '../health/health-cache.js';
import type { ChatRequestBody, ConfigSnapshot, ProviderConfig, ProviderType, RouterRequest, TargetConfig } from '../types.js';
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
 * call now (configured, not blocked by health, able to honour every
 * parameter); the first listed one when none is. A query: nothing is sent,
 * nothing recorded, no round-robin counter moves. Throws the RouterError the
 * request would get from `execute` for an unknown model or an alias of
 * another kind.
 */
export function countTokens(snapshot: ConfigSnapshot, request: RouterRequest, deps: CountDeps): TokenCount {
  const { alias, config } = resolveModel(snapshot, request.model, 'chat');
  if (config.kind !== 'chat') throw kindMismatch(snapshot, config, 'chat', alias);
  const body = request.body as ChatRequestBody;
  const target = config.chain.find((t) => usable(snapshot, t, request, deps)) ?? config.chain[0];
  return { inputTokens: estimatePromptTokens(body), alias, target: target?.id };
}

function usable(snapshot: ConfigSnapshot, target: TargetConfig, request: RouterRequest, deps: CountDeps): boolean {
  const provider = snapshot.providers.get(target.provider);
  const adapter = provider === undefined ? undefined : deps.adapters.get(provider.type);
  if (adapter === undefined || targetParameters(adapter, provider!, target, request).kind === 'refused') return false;
  return deps.health.check(target, provider).ok;
}
