import { ContextFit } from '../context/context-fit.js';
import { estimateTokens } from '../context/estimate-tokens.js';
import { requestedCompletionTokens } from '../context/request-tokens.js';
import type { ChatRequestBody, EmbeddingRequestBody, RateLimit, TargetConfig } from '../types.js';

/**
 * What one request charges to a target's rate windows: 1 to an `rpm` window;
 * to a `tpm` window its estimated prompt tokens (the estimate context_window
 * checks use) plus the answer's budget it reserves — `max_completion_tokens`,
 * else `max_tokens`, else the target's `context_reserve` (512 by default). An
 * embeddings request charges its inputs' estimate (a token array: its length).
 * The estimate is computed once per request, and only when a `tpm` asks.
 */
export class RequestCost {
  private prompt: number | undefined;
  private readonly requested: number | undefined;

  constructor(
    private readonly kind: 'chat' | 'embedding',
    private readonly body: unknown,
    private readonly fit: ContextFit | undefined,
  ) {
    this.requested = kind === 'chat' ? requestedCompletionTokens(body as ChatRequestBody) : undefined;
  }

  of(rate: RateLimit, target: TargetConfig): number {
    if (rate.unit === 'rpm') return 1;
    this.prompt ??= this.kind === 'chat' ? (this.fit ?? new ContextFit(this.body as ChatRequestBody)).promptTokens() : embeddingTokens(this.body as EmbeddingRequestBody);
    return this.prompt + (this.kind === 'chat' ? (this.requested ?? target.settings.contextReserve) : 0);
  }
}

function embeddingTokens(body: EmbeddingRequestBody): number {
  const input = body.input;
  if (typeof input === 'string') return Math.max(1, estimateTokens(input));
  let tokens = 0;
  for (const item of input) tokens += typeof item === 'string' ? estimateTokens(item) : typeof item === 'number' ? 1 : item.length;
  return Math.max(1, tokens);
}
