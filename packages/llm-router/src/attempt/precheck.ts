/**
 * A target's pre-call checks, the one rule for "can this target be called
 * now": context fit, the request's parameters, health, configuration. The
 * attempt loop asks it before each call (execute.ts); counting tokens asks it
 * to pick the target it counts for (context/count-tokens.ts), so the two can
 * never disagree on which target would serve a request.
 */
import type { Adapter } from '../adapters/adapter.js';
import type { ContextFit } from '../context/context-fit.js';
import type { HealthBlock, HealthCheck } from '../health/health-cache.js';
import type { AliasConfig, ConfigSnapshot, ProviderConfig, ProviderType, RouterRequest, TargetConfig } from '../types.js';
import type { AttemptReason } from './attempt-reasons.js';
import type { PassKind, PassTally } from './pass-summary.js';
import { AS_SENT, targetParameters, type TargetParameters } from './target-parameters.js';

/** What the checks read: the request, its alias, the config, health and adapters, and (chat only) its context fit. */
export interface PrecheckInputs {
  readonly snapshot: ConfigSnapshot;
  readonly request: RouterRequest;
  readonly config: AliasConfig;
  readonly deps: {
    readonly health: { check(target: TargetConfig, provider: ProviderConfig | undefined): HealthCheck };
    readonly adapters: { get(type: ProviderType): Adapter | undefined };
  };
  /** Undefined for an embedding request: it has no messages to estimate. */
  readonly fit: ContextFit | undefined;
}

/** A target that passed its pre-call checks, with what the call needs. */
export interface Ready {
  readonly kind: 'ready';
  readonly provider: ProviderConfig;
  readonly adapter: Adapter;
  readonly parameters: Exclude<TargetParameters, { kind: 'refused' }>;
}

/** A target's pre-call checks: callable with what the call needs, or skipped (how the pass counts it). */
export type Precheck =
  | Ready
  | { readonly kind: 'skip'; readonly reason: AttemptReason; readonly detail: string | undefined; readonly count: (tally: PassTally) => void };

function skip(reason: AttemptReason, detail: string | undefined, count: (tally: PassTally) => void): Precheck {
  return { kind: 'skip', reason, detail, count };
}

/** Skips that `try_anyway` may override: a target without a key or adapter cannot work at all. */
function isTransient(kind: HealthBlock): boolean {
  return kind !== 'unconfigured';
}

/** Whether `target` can be called at all now (fit, parameters, health, configuration), without logging anything. */
export function precheck(inputs: PrecheckInputs, target: TargetConfig, kind: PassKind): Precheck {
  const { snapshot, deps, config, request } = inputs;
  // A prompt that cannot fit is never sent, whatever the target's health (Ollama would cut it silently).
  const shortfall = inputs.fit?.check(target);
  if (shortfall !== undefined) {
    return skip('context_too_small', `needs ~${shortfall.needed} tokens, context window ${shortfall.window}`, (t) => t.tooSmall());
  }
  const provider = snapshot.providers.get(target.provider);
  const adapter = provider === undefined ? undefined : deps.adapters.get(provider.type);
  // Before health: a target that cannot honour the request is no option whatever its state.
  const parameters = config.kind === 'chat' && adapter !== undefined ? targetParameters(adapter, provider!, target, request) : AS_SENT;
  if (parameters.kind === 'refused') {
    const param = parameters.param;
    return skip('unsupported_parameter', parameters.detail, (t) => t.cannotHonour(param));
  }
  const check = deps.health.check(target, provider);
  if (!check.ok && !(kind === 'ignoring_health' && isTransient(check.kind))) {
    return skip(check.reason, check.until === undefined ? undefined : `until ${new Date(check.until).toISOString()}`, (t) =>
      t.blocked(check, isTransient(check.kind)),
    );
  }
  if (provider === undefined || adapter === undefined) return skip('unconfigured: unknown provider', undefined, (t) => t.unusable());
  return { kind: 'ready', provider, adapter, parameters };
}
