import { unconfiguredReason } from '../config/provider-status.js';
import type { ConfigSnapshot, ProviderConfig } from '../types.js';
import { BreakerState } from './circuit-breaker.js';
import type { HealthCache } from './health-cache.js';

export interface HealthProbeOptions {
  readonly cache: HealthCache;
  /** The current snapshot, read on every round so a reload takes effect at once. */
  readonly config: () => ConfigSnapshot;
  /** GET /models or /api/tags: no tokens spent. Must honour `signal`. */
  readonly listModels: (provider: ProviderConfig, signal: AbortSignal) => Promise<string[]>;
  readonly now?: () => number;
}

/** Never schedule rounds closer than this, whatever the config says. */
const MIN_ROUND_GAP_MS = 1_000; // 1 s

class ProbeTimeout extends Error {
  constructor(ms: number) {
    super(`probe timed out after ${ms} ms`);
  }
}

/**
 * Background health checks of every provider some alias uses. Each provider is
 * probed every `probe_interval`, bounded by `probe_timeout`; a provider whose
 * breaker is open is left alone until its unhealthy period ends, then
 * re-checked straight away (half-open). Unconfigured providers are not probed.
 */
export class HealthProbe {
  private readonly cache: HealthCache;
  private readonly config: () => ConfigSnapshot;
  private readonly listModels: HealthProbeOptions['listModels'];
  private readonly now: () => number;
  private readonly lastProbe = new Map<string, number>();
  private readonly inFlight = new Set<AbortController>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private running = false;
  private stopped = false;
  /** Out-of-band probes in flight, one per provider at most. */
  private readonly single = new Map<string, Promise<void>>();

  constructor(options: HealthProbeOptions) {
    this.cache = options.cache;
    this.config = options.config;
    this.listModels = options.listModels;
    this.now = options.now ?? Date.now;
  }

  /** Probes now, then keeps probing in the background until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.tick();
  }

  /** Stops the loop, cancels probes in flight (their results are dropped) and waits for the round to end. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const controller of this.inFlight) controller.abort(new Error('health probe stopped'));
    await Promise.all([this.round, ...this.single.values()]);
  }

  /**
   * Probes one provider now, out of band — after a first-byte timeout, whose
   * health only a check of the provider itself can tell — and joins a probe of
   * it already running, so a burst of timeouts costs one probe.
   */
  probeProvider(provider: ProviderConfig): Promise<void> {
    if (this.stopped || unconfiguredReason(provider) !== undefined) return Promise.resolve();
    let probe = this.single.get(provider.name);
    if (probe === undefined) {
      probe = this.probe(provider).finally(() => this.single.delete(provider.name));
      this.single.set(provider.name, probe);
    }
    return probe;
  }

  /** One round over every eligible provider (all due or not); joins a round already running. */
  runOnce(): Promise<void> {
    return this.runRound(false);
  }

  private runRound(onlyDue: boolean): Promise<void> {
    if (this.round !== undefined) return this.round;
    const snapshot = this.config();
    const providers = this.eligible(snapshot).filter((provider) => !onlyDue || this.isDue(provider));
    this.round = Promise.all(providers.map((provider) => this.probe(provider))).then(
      () => undefined,
      () => undefined,
    );
    const round = this.round;
    void round.finally(() => {
      if (this.round === round) this.round = undefined;
    });
    return round;
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    await this.runRound(true);
    if (!this.running || this.timer !== undefined) return;
    this.timer = setTimeout(() => void this.tick(), this.nextDelay(this.config()));
    this.timer.unref();
  }

  /** Providers used by some alias, configured, and not inside an unhealthy period. */
  private eligible(snapshot: ConfigSnapshot): ProviderConfig[] {
    return [...usedProviders(snapshot)].flatMap((name) => {
      const provider = snapshot.providers.get(name);
      if (provider === undefined || unconfiguredReason(provider) !== undefined) return [];
      return this.cache.breakerOf(name).state === BreakerState.Open ? [] : [provider];
    });
  }

  private isDue(provider: ProviderConfig): boolean {
    if (this.cache.breakerOf(provider.name).state === BreakerState.HalfOpen) return true;
    const last = this.lastProbe.get(provider.name);
    return last === undefined || this.now() - last >= provider.settings.probeIntervalMs;
  }

  /** Wake for the next provider due, or the end of an unhealthy period, whichever is first. */
  private nextDelay(snapshot: ConfigSnapshot): number {
    const now = this.now();
    let next = now + snapshot.settings.probeIntervalMs;
    for (const name of usedProviders(snapshot)) {
      const provider = snapshot.providers.get(name);
      if (provider === undefined) continue;
      const breaker = this.cache.breakerOf(name);
      const due = breaker.state === BreakerState.Open && breaker.openUntil !== undefined
        ? breaker.openUntil
        : (this.lastProbe.get(name) ?? now) + provider.settings.probeIntervalMs;
      next = Math.min(next, due);
    }
    return Math.max(MIN_ROUND_GAP_MS, next - now);
  }

  private async probe(provider: ProviderConfig): Promise<void> {
    const controller = new AbortController();
    const timeoutMs = provider.settings.probeTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    this.inFlight.add(controller);
    this.lastProbe.set(provider.name, this.now());
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new ProbeTimeout(timeoutMs);
          controller.abort(error);
          reject(error);
        }, timeoutMs);
        timer.unref();
      });
      const call = this.listModels(provider, controller.signal);
      call.catch(() => undefined); // the timeout may win the race; its late rejection is expected
      const models = await Promise.race([call, timeout]);
      if (!controller.signal.aborted) this.cache.recordProbe(provider.name, { ok: true, models }, provider.settings);
    } catch (error) {
      // Cancelled by stop(): not evidence about the provider.
      if (controller.signal.aborted && !(controller.signal.reason instanceof ProbeTimeout)) return;
      this.cache.recordProbe(provider.name, { ok: false, error: `probe failed: ${describe(error)}` }, provider.settings);
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
    }
  }
}

/** Names of the providers some alias's chain uses: the only ones worth probing. */
function usedProviders(snapshot: ConfigSnapshot): Set<string> {
  const used = new Set<string>();
  for (const alias of snapshot.aliases.values()) for (const target of alias.chain) used.add(target.provider);
  return used;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code ?? (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}
