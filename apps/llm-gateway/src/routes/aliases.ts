/** GET /v1/aliases: each alias with its kind (and space), strategy and chain, and each target's live state. */
import type { ServerResponse } from 'node:http';
import type { TargetView } from '@mana/llm-router';
import type { GatewayContext } from '../context.js';
import { sendJson } from '../http/respond.js';

export function handleAliases(ctx: GatewayContext, res: ServerResponse, requestId: string): void {
  const data = ctx.router.aliases().map((a) => ({
    alias: a.alias,
    description: a.description,
    kind: a.kind,
    ...(a.kind === 'embedding' ? { embedding_space: a.embeddingSpace ?? null, max_batch: a.maxBatch ?? null } : {}),
    strategy: a.strategy,
    chain: a.chain.map((t) => ({
      target: t.target,
      provider: t.provider,
      model: t.model,
      weight: t.weight,
      state: t.state,
      until: t.until,
      reason: t.reason,
      ...targetLoadJson(ctx, t),
    })),
  }));
  sendJson(res, ctx.state, 200, { object: 'list', data }, { 'x-request-id': requestId });
}

/**
 * A target's load as the views show it (here and in /v1/health): its recent
 * time to first token on streams (null until one was answered) and, only for a
 * target with a `max_concurrency`, its count now (`saturated` while full).
 */
export function targetLoadJson(ctx: GatewayContext, t: TargetView) {
  const first_token_ms = ctx.metrics.firstTokenTimes.recentMs(t.target);
  if (t.load === undefined) return { first_token_ms };
  const { counts, inFlight, limit, queued, saturated } = t.load;
  return { first_token_ms, load: { counts, in_flight: inFlight, limit, queued, saturated } };
}
