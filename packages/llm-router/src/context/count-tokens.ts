import { kindMismatch } from '../attempt/kind-mismatch.js';
import { precheck, type PrecheckInputs } from '../attempt/precheck.js';
import { resolveModel } from '../config/alias-registry.js';
import type { ChatRequestBody, ConfigSnapshot, RouterRequest } from '../types.js';
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

/** What counting needs from the router: what the attempt loop's pre-call checks ask (precheck.ts). */
export type CountDeps = PrecheckInputs['deps'];

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
  const fit = new ContextFit(body);
  const inputs = { snapshot, request, config, deps, fit };
  const target = config.chain.find((t) => precheck(inputs, t, 'first').kind === 'ready') ?? config.chain[0];
  // The fit's own estimate (made once, maybe already by the checks above): the same as estimatePromptTokens(body).
  return { inputTokens: fit.promptTokens(), alias, target: target?.id };
}
