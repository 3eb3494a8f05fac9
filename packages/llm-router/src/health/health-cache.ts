import type { UnconfiguredReason } from '../attempt/attempt-reasons.js';
import { UNCONFIGURED_PREFIX, unconfiguredReason } from '../config/provider-status.js';
import { splitTarget } from '../config/targets.js';
import type { AliasView, ConfigSnapshot, HealthChangeEvent, HealthTransition, ProviderConfig, ProviderHealthView, Settings, TargetConfig } from '../types.js';
import { BreakerState, CircuitBreaker, type BreakerSnapshot, type Flip } from './circuit-breaker.js';
import { buildAliasViews, buildProviderViews } from './health-views.js';
import { listingHasModel, listingIsAuthoritative } from './model-listing.js';
import { redactSecrets } from './redact.js';

/** Why a target is skipped; the pre-check's reasons in the order it tests them. */
export type HealthBlock = 'unconfigured' | 'unhealthy' | 'model_missing' | 'cooling_down';

/**
 * `kind` is the block, for code to switch on; `reason` is the text attempts and
 * errors show (`unconfigured: <why>`, else the kind itself).
 */
export type HealthCheck = { ok: true } | { ok: false; reason: Exclude<HealthBlock, 'unconfigured'> | UnconfiguredReason; kind: HealthBlock; until?: number };

export type ProbeResult = { ok: true; models?: readonly string[] } | { ok: false; error: string };

export interface Cooldown {
  readonly until: number;
  readonly reason: string;
}

export interface HealthCacheOptions {
  readonly now: () => number;
}

/**
 * What the router knows about upstream health, without any network I/O:
 * - a circuit breaker per provider (connection-level and probe failures);
 * - a cooldown per target (`provider/model`), after a 5xx/429/401/402/403/404
 *   that concerns that model only;
 * - the last successful model listing per provider (Ollama: what is pulled).
 * Written by the probe and the attempt loop, read by the attempt loop and views.
 */
export class HealthCache {
  private readonly now: () => number;
  private readonly breakers = new Map<string, CircuitBreaker>();
  private readonly cooldowns = new Map<string, Cooldown>();
  private readonly listings = new Map<string, ReadonlySet<string>>();
  private readonly listeners = new Set<(event: HealthChangeEvent) => void>();
  /** Told of each local transition (shared state); unset in a single replica, where the check costs nothing else. */
  private transitionObserver: ((transition: HealthTransition) => void) | undefined;
  /** The provider configs the state was gathered against, to tell on reload whether an endpoint changed. */
  private readonly knownProviders = new Map<string, ProviderConfig>();

  constructor(options: HealthCacheOptions) {
    this.now = options.now;
  }

  /** Subscribes to healthy ⇄ unhealthy flips of a provider; returns the unsubscribe function. */
  onChange(listener: (event: HealthChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Sets the one observer of local transitions (replaces any earlier one);
   * returns the function that removes it.
   */
  observeTransitions(observer: (transition: HealthTransition) => void): () => void {
    this.transitionObserver = observer;
    return () => {
      if (this.transitionObserver === observer) this.transitionObserver = undefined;
    };
  }

  /**
   * Applies a transition another replica announced, without announcing it
   * again (no observer call) and without health events. Returns whether it
   * changed anything (a stale or already known transition does not).
   */
  applyTransition(transition: HealthTransition): boolean {
    switch (transition.kind) {
      case 'provider_unhealthy':
        return this.breaker(transition.subject).openUntilRemote(transition.until, redactSecrets(transition.reason, this.knownSecrets()), transition.at);
      case 'provider_healthy':
        return this.breakers.get(transition.subject)?.closeRemote(transition.at) ?? false;
      case 'cooldown':
        if (transition.until <= this.now()) return false;
        return this.setCooldown(transition.subject, transition.until, transition.reason);
    }
  }

  /**
   * The pre-check before calling a target. `reason` is the first block that
   * applies, in the order unconfigured, unhealthy, model_missing, cooling_down.
   * `until` (epoch ms) is when the target becomes usable again: the LATER of
   * its time-based blocks (an open breaker and a cooldown can overlap), and
   * none while a block does not end by waiting (unconfigured, model missing —
   * only a probe clears that). This is the one place that knows it; Retry-After
   * and the views read it from here.
   */
  check(target: TargetConfig, provider: ProviderConfig | undefined): HealthCheck {
    if (provider === undefined) return { ok: false, reason: `${UNCONFIGURED_PREFIX}unknown provider ${target.provider}`, kind: 'unconfigured' };
    this.knownProviders.set(provider.name, provider);
    const unconfigured = unconfiguredReason(provider);
    if (unconfigured !== undefined) return { ok: false, reason: `${UNCONFIGURED_PREFIX}${unconfigured}`, kind: 'unconfigured' };
    const breaker = this.breakers.get(provider.name)?.snapshot();
    const openUntil = breaker?.state === BreakerState.Open ? breaker.openUntil : undefined;
    const missing = this.isModelMissing(target, provider);
    const cooldown = this.cooldownOf(target.id);
    if (openUntil === undefined && !missing && cooldown === undefined) return { ok: true };
    const kind = openUntil !== undefined ? 'unhealthy' : missing ? 'model_missing' : 'cooling_down';
    if (missing) return { ok: false, reason: kind, kind };
    return { ok: false, reason: kind, kind, until: Math.max(openUntil ?? 0, cooldown?.until ?? 0) };
  }

  reportSuccess(provider: string): void {
    const flip = this.breaker(provider).success();
    this.emit(provider, flip, null);
    if (flip !== undefined && this.transitionObserver !== undefined) this.announce({ kind: 'provider_healthy', subject: provider, at: this.now() });
  }

  /** A connection-level failure (refused, reset, DNS, timeout) or a failed probe. */
  reportFailure(provider: string, error: string, settings: Settings): void {
    // Redacted before it is stored, so events and logs never see a key either.
    const text = redactSecrets(error, this.knownSecrets());
    const breaker = this.breaker(provider);
    const openUntilBefore = breaker.snapshot().openUntil;
    this.emit(provider, breaker.failure(text, settings), text);
    if (this.transitionObserver === undefined) return;
    // Opened, or reopened after a failed half-open trial: either way a new period others should skip.
    const { openUntil } = breaker.snapshot();
    if (openUntil !== undefined && openUntil !== openUntilBefore) {
      this.announce({ kind: 'provider_unhealthy', subject: provider, until: openUntil, reason: text, at: this.now() });
    }
  }

  /** Skips one target until `untilMs`; a longer existing cooldown is kept. */
  coolDown(targetId: string, untilMs: number, reason: string): void {
    if (!this.setCooldown(targetId, untilMs, reason) || this.transitionObserver === undefined) return;
    this.announce({ kind: 'cooldown', subject: targetId, until: untilMs, reason: this.cooldowns.get(targetId)!.reason, at: this.now() });
  }

  recordProbe(provider: string, result: ProbeResult, settings: Settings): void {
    if (!result.ok) {
      this.reportFailure(provider, result.error, settings);
      return;
    }
    if (result.models !== undefined) this.listings.set(provider, new Set(result.models));
    this.reportSuccess(provider);
  }

  /** Breaker state of a provider (closed when nothing was recorded yet). */
  breakerOf(provider: string): BreakerSnapshot {
    return this.breaker(provider).snapshot();
  }

  /** The active cooldown of a target, if any (expired ones are forgotten). */
  cooldownOf(targetId: string): Cooldown | undefined {
    const cooldown = this.cooldowns.get(targetId);
    if (cooldown === undefined) return undefined;
    if (cooldown.until > this.now()) return cooldown;
    this.cooldowns.delete(targetId);
    return undefined;
  }

  providerView(snapshot: ConfigSnapshot): ProviderHealthView[] {
    return buildProviderViews(this, snapshot);
  }

  aliasView(snapshot: ConfigSnapshot): AliasView[] {
    return buildAliasViews(this, snapshot);
  }

  /**
   * The earliest time (epoch ms) at which one of `targets` becomes usable
   * (`check().until`; now for one that is usable already) — for a
   * `Retry-After` on no_healthy_provider. Undefined when none will recover by
   * waiting (unconfigured, model missing).
   */
  soonestRecovery(targets: readonly TargetConfig[], providers: ReadonlyMap<string, ProviderConfig>): number | undefined {
    let soonest: number | undefined;
    for (const target of targets) {
      const check = this.check(target, providers.get(target.provider));
      const recovery = check.ok ? this.now() : check.until;
      if (recovery !== undefined && (soonest === undefined || recovery < soonest)) soonest = recovery;
    }
    return soonest;
  }

  /**
   * After a reload: keep what is known about providers whose endpoint (type,
   * URL, key) is unchanged, and about their targets; forget the rest, since
   * state gathered against another endpoint says nothing about the new one.
   */
  retain(snapshot: ConfigSnapshot): void {
    const kept = new Set<string>();
    for (const [name, provider] of snapshot.providers) {
      const before = this.knownProviders.get(name);
      if (before === undefined || sameEndpoint(before, provider)) kept.add(name);
    }
    for (const name of [...this.breakers.keys()]) if (!kept.has(name)) this.breakers.delete(name);
    for (const name of [...this.listings.keys()]) if (!kept.has(name)) this.listings.delete(name);
    for (const id of [...this.cooldowns.keys()]) {
      const provider = splitTarget(id)?.provider;
      if (provider === undefined || !kept.has(provider)) this.cooldowns.delete(id);
    }
    this.knownProviders.clear();
    for (const [name, provider] of snapshot.providers) this.knownProviders.set(name, provider);
  }

  /** Secrets of the known providers, for redacting error text in views. */
  secrets(snapshot: ConfigSnapshot): string[] {
    return secretsOf(snapshot.providers.values());
  }

  private knownSecrets(): string[] {
    return secretsOf(this.knownProviders.values());
  }

  private setCooldown(targetId: string, untilMs: number, reason: string): boolean {
    const existing = this.cooldownOf(targetId);
    if (existing !== undefined && existing.until >= untilMs) return false;
    this.cooldowns.set(targetId, { until: untilMs, reason: redactSecrets(reason, this.knownSecrets()) });
    return true;
  }

  private announce(transition: HealthTransition): void {
    try {
      this.transitionObserver?.(transition);
    } catch {
      // A failing observer (the shared-state sync) must not break routing.
    }
  }

  private isModelMissing(target: TargetConfig, provider: ProviderConfig): boolean {
    if (!listingIsAuthoritative(provider)) return false;
    const listing = this.listings.get(provider.name);
    return listing !== undefined && !listingHasModel(provider, listing, target.model);
  }

  private breaker(provider: string): CircuitBreaker {
    let breaker = this.breakers.get(provider);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(this.now);
      this.breakers.set(provider, breaker);
    }
    return breaker;
  }

  private emit(provider: string, flip: Flip, reason: string | null): void {
    if (flip === undefined) return;
    const event: HealthChangeEvent = { provider, healthy: flip === 'became_healthy', reason: flip === 'became_healthy' ? null : reason, at: this.now() };
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A broken metrics hook must not break routing.
      }
    }
  }
}

function sameEndpoint(a: ProviderConfig, b: ProviderConfig): boolean {
  return a.type === b.type && a.baseUrl === b.baseUrl && a.apiKey === b.apiKey;
}

function secretsOf(providers: Iterable<ProviderConfig>): string[] {
  const secrets: string[] = [];
  for (const provider of providers) secrets.push(...provider.secrets);
  return secrets;
}
