/** GET /v1/aliases: each alias with its kind (and space), strategy and chain, and each target's live state. */
import type { TargetView } from '@mana/llm-router';
import type { Call } from '../call.js';
import type { GatewayContext } from '../context.js';

export function handleAliases(call: Call): void {
  const { ctx } = call;
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
  call.json(200, { object: 'list', data });
}

/**
 * A target's load as the views show it (here and in /v1/health): its recent
 * time to first token on streams (null until one was answered), only for a
 * target with a `max_concurrency` its count now (`saturated` while full), and
 * only for one with an `rpm` / `tpm` its rate windows.
 */
export function targetLoadJson(ctx: GatewayContext, t: TargetView) {
  return {
    first_token_ms: ctx.metrics.firstTokenTimes.recentMs(t.target),
    ...(t.load === undefined
      ? {}
      : { load: { counts: t.load.counts, in_flight: t.load.inFlight, limit: t.load.limit, queued: t.load.queued, saturated: t.load.saturated } }),
    // Only for a target with an `rpm` / `tpm`: each window's use over the last minute (`saturated` while used up).
    ...(t.rate === undefined
      ? {}
      : { rate: t.rate.map((w) => ({ unit: w.unit, counts: w.counts, used: w.used, limit: w.limit, queued: w.queued, saturated: w.saturated })) }),
  };
}
