import type { ChatRequestBody, TargetConfig } from '../types.js';
import { estimateTokens } from './estimate-tokens.js';
import { requestedCompletionTokens, requestTokens } from './request-tokens.js';

/** A target the request does not fit: what it holds and what the request needs. */
export interface ContextShortfall {
  readonly window: number;
  /** Estimated prompt tokens plus the answer's budget. */
  readonly needed: number;
}

const textLength = (text: string): number => text.length;

/**
 * Whether one request fits each target's context window: estimated prompt
 * tokens + the answer's budget (`max_completion_tokens` / `max_tokens`, else
 * the target's `context_reserve`) ≤ `context_window`.
 *
 * Cheap by construction: nothing is computed for targets without a window;
 * for a target with one, a bound from string lengths comes first (the estimate
 * never exceeds a text's length, so a request whose total length fits, fits),
 * and the finer estimate runs only when that bound does not settle it. Both
 * are computed at most once per request.
 */
export class ContextFit {
  private bound: number | undefined;
  private estimate: number | undefined;
  private readonly requested: number | undefined;

  constructor(private readonly body: ChatRequestBody) {
    this.requested = requestedCompletionTokens(body);
  }

  /** Undefined when the request fits (or the window is unknown); otherwise the shortfall. */
  check(target: TargetConfig): ContextShortfall | undefined {
    const window = target.contextWindow;
    if (window === undefined) return undefined;
    const answer = this.requested ?? target.settings.contextReserve;
    this.bound ??= requestTokens(this.body, textLength);
    if (this.bound + answer <= window) return undefined;
    const prompt = this.promptTokens();
    return prompt + answer <= window ? undefined : { window, needed: prompt + answer };
  }

  /** The estimated prompt tokens (computed on first use). */
  promptTokens(): number {
    this.estimate ??= requestTokens(this.body, estimateTokens);
    return this.estimate;
  }
}
