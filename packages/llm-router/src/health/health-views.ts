import { UNCONFIGURED_PREFIX, unconfiguredReason } from '../config/provider-status.js';
import type { AliasView, ConfigSnapshot, ProviderHealthView, TargetView } from '../types.js';
import { BreakerState } from './circuit-breaker.js';
import type { HealthCache } from './health-cache.js';
import { redactSecrets } from './redact.js';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/**
 * Per provider, as /v1/health shows it. `healthy` means usable and with no
 * open failure record: an unconfigured provider, or one whose breaker is open
 * or half-open (not yet re-checked), is not healthy; a configured one that
 * nothing has checked yet is not known (`null`), not assumed healthy. No secrets.
 */
export function buildProviderViews(cache: HealthCache, snapshot: ConfigSnapshot): ProviderHealthView[] {
  const secrets = cache.secrets(snapshot);
  return [...snapshot.providers.values()].map((provider) => {
    const reason = unconfiguredReason(provider);
    const breaker = cache.breakerOf(provider.name);
    return {
      provider: provider.name,
      type: provider.type,
      configured: reason === undefined,
      unconfiguredReason: reason,
      healthy: reason !== undefined ? false : breaker.lastCheck === undefined ? null : breaker.state === BreakerState.Closed,
      lastCheck: iso(breaker.lastCheck),
      consecutiveFailures: breaker.consecutiveFailures,
      unhealthyUntil: breaker.state === BreakerState.Closed ? null : iso(breaker.openUntil),
      lastError: breaker.lastError === undefined ? null : redactSecrets(breaker.lastError, secrets),
    };
  });
}

/**
 * Per alias, as /v1/aliases shows it: each target's state is what the router
 * would do with it right now (the same pre-check the attempt loop runs), so a
 * half-open provider shows as healthy: it will be tried.
 */
export function buildAliasViews(cache: HealthCache, snapshot: ConfigSnapshot): AliasView[] {
  const secrets = cache.secrets(snapshot);
  return [...snapshot.aliases.values()].map((alias) => ({
    alias: alias.name,
    description: alias.description,
    kind: alias.kind,
    embeddingSpace: alias.embeddingSpace,
    maxBatch: alias.maxBatch,
    strategy: alias.strategy,
    chain: alias.chain.map((target): TargetView => {
      const base = { target: target.id, provider: target.provider, model: target.model, weight: target.weight };
      const check = cache.check(target, snapshot.providers.get(target.provider));
      if (check.ok) return { ...base, state: 'healthy', until: null, reason: null };
      switch (check.kind) {
        case 'unconfigured':
          return { ...base, state: 'unconfigured', until: null, reason: check.reason.slice(UNCONFIGURED_PREFIX.length) };
        case 'cooling_down': {
          const cooldown = cache.cooldownOf(target.id);
          return { ...base, state: 'cooling_down', until: iso(check.until), reason: cooldown === undefined ? null : redactSecrets(cooldown.reason, secrets) };
        }
        case 'unhealthy':
          return { ...base, state: 'unhealthy', until: iso(check.until), reason: null };
        case 'model_missing':
          return { ...base, state: 'model_missing', until: null, reason: `${target.model} is not listed by ${target.provider}` };
      }
    }),
  }));
}
