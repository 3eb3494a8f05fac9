/**
 * GET /v1/health: per provider health as the router's cache knows it.
 * Always 200: it reports, it doesn't fail (use /readyz for load balancers).
 */
import type { Call } from '../call.js';
import type { GatewayContext } from '../context.js';
import { targetLoadJson } from './aliases.js';

/**
 * POST /admin/health/probe: one probe round over every configured provider now
 * (each bounded by its probe timeout), then the same answer as GET /v1/health.
 */
export async function handleProbeNow(call: Call): Promise<void> {
  await call.ctx.router.probeNow();
  handleHealth(call);
}

export function handleHealth(call: Call): void {
  const { ctx } = call;
  const providers = ctx.router.health().map((p) => ({
    provider: p.provider,
    type: p.type,
    configured: p.configured,
    unconfigured_reason: p.unconfiguredReason ?? null,
    healthy: p.healthy,
    last_check: p.lastCheck,
    consecutive_failures: p.consecutiveFailures,
    unhealthy_until: p.unhealthyUntil,
    last_error: p.lastError,
  }));
  // Unconfigured providers (no key) are a setup choice, not an outage: only configured ones count.
  const configured = providers.filter((p) => p.configured);
  // Not known yet (`healthy: null`) counts as usable: the router does try such a provider.
  const usable = configured.filter((p) => p.healthy !== false).length;
  const usage = usageHealth(ctx);
  const providerStatus = usable === 0 ? 'down' : usable === configured.length ? 'ok' : 'degraded';
  // A failing usage store loses nothing yet (records wait in a bounded queue) but needs attention.
  const shared = sharedHealth(ctx);
  const targets = chainTargets(ctx);
  // Shared state degraded: requests still flow on this replica's own health state, but it no longer hears the others.
  const status = providerStatus === 'ok' && (usage.status === 'failing' || shared.state === 'degraded') ? 'degraded' : providerStatus;
  call.json(
    200,
    { status, checked_at: new Date().toISOString(), config: { source: ctx.router.config.source, loaded_at: new Date(ctx.router.config.loadedAt).toISOString() }, providers, targets, usage, shared },
    { 'cache-control': 'no-store' },
  );
}

/** Each target of some alias chain once, with its load (see targetLoadJson). */
function chainTargets(ctx: GatewayContext) {
  const seen = new Set<string>();
  const targets = [];
  for (const alias of ctx.router.aliases()) {
    for (const t of alias.chain) {
      if (seen.has(t.target)) continue;
      seen.add(t.target);
      targets.push({ target: t.target, state: t.state, ...targetLoadJson(ctx, t) });
    }
  }
  return targets;
}

function usageHealth(ctx: GatewayContext) {
  if (ctx.usageRecorder === undefined) return { status: 'off' as const };
  const s = ctx.usageRecorder.status;
  return {
    status: s.failing ? ('failing' as const) : ('ok' as const),
    store: s.store,
    queued: s.queued,
    written: s.written,
    dropped: s.dropped,
    last_error: s.lastError,
    last_error_at: s.lastErrorAt === null ? null : new Date(s.lastErrorAt).toISOString(),
  };
}

function sharedHealth(ctx: GatewayContext) {
  if (ctx.shared === undefined) return { state: 'off' as const };
  const s = ctx.shared.status;
  return {
    state: s.state,
    replica: s.replica,
    since: new Date(s.since).toISOString(),
    last_sync_at: s.lastSyncAt === null ? null : new Date(s.lastSyncAt).toISOString(),
    published: s.published,
    applied: s.applied,
    pending: s.pending,
    dropped: s.dropped,
    rejected: s.rejected,
    last_error: s.lastError,
  };
}
