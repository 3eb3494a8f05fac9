import { AdapterRegistry } from './adapters/registry.js';
import { BackgroundGate, InFlight } from './attempt/background-gate.js';
import { execute } from './attempt/execute.js';
import type { ExecuteDeps } from './attempt/execute-deps.js';
import { createSchemaChecker, type SchemaCheckerOptions } from './attempt/schema-checker.js';
import { listModels } from './config/alias-registry.js';
import { countTokens, type TokenCount } from './context/count-tokens.js';
import { loadConfigFile } from './config/load-config.js';
import { RouterError } from './errors.js';
import { HealthCache } from './health/health-cache.js';
import { HealthProbe } from './health/health-probe.js';
import { ConcurrencyBook, type CapacityShare } from './load/concurrency.js';
import { RateBook } from './load/rate-window.js';
import type {
  AliasView,
  ConfigSnapshot,
  HealthTransition,
  ProviderHealthView,
  ReloadResult,
  RouterEvents,
  RouterRequest,
  RouterResult,
} from './types.js';

export interface RouterOptions {
  /** The initial, already validated config. */
  readonly config: ConfigSnapshot;
  /** Where `reload()` re-reads the config from. */
  readonly configPath?: string;
  /** Variables for `${VAR}` in the config on reload (default `process.env`). */
  readonly env?: Record<string, string | undefined>;
  /** Clock for health, cooldowns and durations (default `Date.now`); tests pass a fake one. */
  readonly now?: () => number;
  /** Random source for the weighted strategy (default `Math.random`). */
  readonly random?: () => number;
  /**
   * The effective local limit of a configured capacity (`max_concurrency`, `rpm`, `tpm`),
   * asked on every check, so it must be cheap: with several replicas, this
   * replica's share of the total. Default: the total itself.
   */
  readonly capacityShare?: CapacityShare;
  /** The schema workers: how many, their per-job budget and queue bounds (see attempt/schema-checker.ts for the defaults). */
  readonly schemaChecks?: SchemaCheckerOptions;
}

export interface Router {
  /** The current snapshot. A request keeps the snapshot it started with. */
  readonly config: ConfigSnapshot;
  /** Routes one request. Throws RouterError (unknown_model, no_healthy_provider, upstream_failed, aborted, …). */
  execute(request: RouterRequest): Promise<RouterResult>;
  /**
   * The estimated prompt tokens of a chat request, counted for the target that
   * would serve it now (see context/count-tokens.ts). Sends nothing; throws
   * RouterError `unknown_model` / `alias_kind_mismatch` as `execute` would.
   */
  countTokens(request: RouterRequest): TokenCount;
  /** Re-reads `configPath`; a bad file leaves the old snapshot serving and returns the error. */
  reload(): Promise<ReloadResult>;
  /** Swaps in a validated snapshot; health of targets still present survives. */
  applyConfig(snapshot: ConfigSnapshot): void;
  startProbes(): void;
  probeNow(): Promise<void>;
  /** Stops probes and closes the upstream pools. */
  close(): Promise<void>;
  health(): ProviderHealthView[];
  aliases(): AliasView[];
  models(): string[];
  on<K extends keyof RouterEvents>(event: K, listener: (event: RouterEvents[K]) => void): () => void;
  /**
   * Sets the one observer of this router's own health transitions (breaker
   * opened/closed, cooldown set) — how another process learns them. Called
   * synchronously where the transition happens: it must only queue. Returns
   * the function that removes it. Without an observer nothing is built.
   */
  observeHealthTransitions(observer: (transition: HealthTransition) => void): () => void;
  /** Applies a transition learned from elsewhere to the local health cache (not re-announced); true if it changed anything. */
  applyHealthTransition(transition: HealthTransition): boolean;
}

function identityShare(total: number): number {
  return total;
}

export function createRouter(options: RouterOptions): Router {
  return new ManaRouter(options);
}

type Listeners = { [K in keyof RouterEvents]: Set<(event: RouterEvents[K]) => void> };

class ManaRouter implements Router {
  private snapshot: ConfigSnapshot;
  private readonly now: () => number;
  private readonly cache: HealthCache;
  private readonly adapters = new AdapterRegistry();
  private readonly probe: HealthProbe;
  private readonly listeners: Listeners = { attempt: new Set(), health: new Set(), reload: new Set() };
  /** round_robin counters per alias name. */
  private readonly rotations = new Map<string, number>();
  private readonly deps: ExecuteDeps;
  private readonly stopHealthEvents: () => void;
  private closed = false;

  constructor(private readonly options: RouterOptions) {
    this.snapshot = options.config;
    this.now = options.now ?? Date.now;
    this.cache = new HealthCache({ now: this.now });
    this.stopHealthEvents = this.cache.onChange((event) => this.emit('health', event));
    this.probe = new HealthProbe({
      cache: this.cache,
      config: () => this.snapshot,
      listModels: (provider, signal) => this.adapters.listModels(provider, signal),
      now: this.now,
    });
    const attempt = this.listeners.attempt;
    const emitAttempt = (event: RouterEvents['attempt']): void => this.emit('attempt', event);
    this.deps = {
      health: this.cache,
      adapters: this.adapters,
      now: this.now,
      random: options.random ?? Math.random,
      rotation: (alias) => {
        const n = this.rotations.get(alias) ?? 0;
        this.rotations.set(alias, n + 1);
        return n;
      },
      inFlight: new InFlight(),
      concurrency: new ConcurrencyBook(options.capacityShare ?? identityShare),
      rates: new RateBook(options.capacityShare ?? identityShare, this.now),
      gate: new BackgroundGate(),
      probe: (provider) => void this.probe.probeProvider(provider),
      schemas: createSchemaChecker(options.schemaChecks),
      attemptListener: () => (attempt.size === 0 ? undefined : emitAttempt),
    };
  }

  get config(): ConfigSnapshot {
    return this.snapshot;
  }

  execute(request: RouterRequest): Promise<RouterResult> {
    if (this.closed) return Promise.reject(new RouterError('router_closed', 'the router is closed'));
    // The snapshot is read once: a reload during this request does not change its plan.
    return execute(this.snapshot, request, this.deps);
  }

  countTokens(request: RouterRequest): TokenCount {
    return countTokens(this.snapshot, request, this.deps);
  }

  async reload(): Promise<ReloadResult> {
    const path = this.options.configPath;
    if (path === undefined) {
      const error = 'no config path to reload from';
      this.emit('reload', { ok: false, source: this.snapshot.source, error });
      return { ok: false, source: this.snapshot.source, error };
    }
    let next: ConfigSnapshot;
    try {
      next = await loadConfigFile(path, this.options.env === undefined ? {} : { env: this.options.env });
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.emit('reload', { ok: false, source: path, error });
      return { ok: false, source: path, error };
    }
    this.applyConfig(next);
    this.emit('reload', { ok: true, source: next.source, error: undefined });
    return { ok: true, source: next.source };
  }

  applyConfig(snapshot: ConfigSnapshot): void {
    this.snapshot = snapshot;
    this.cache.retain(snapshot);
    for (const alias of this.rotations.keys()) if (!snapshot.aliases.has(alias)) this.rotations.delete(alias);
    void this.adapters.retain(snapshot.providers.values());
  }

  startProbes(): void {
    if (!this.closed) this.probe.start();
  }

  probeNow(): Promise<void> {
    return this.probe.runOnce();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.probe.stop();
    this.stopHealthEvents();
    await this.adapters.close();
    await this.deps.schemas.close();
  }

  health(): ProviderHealthView[] {
    return this.cache.providerView(this.snapshot);
  }

  aliases(): AliasView[] {
    const snapshot = this.snapshot;
    const { concurrency: book, rates } = this.deps;
    return this.cache.aliasView(snapshot).map((view) => {
      const chain = snapshot.aliases.get(view.alias)?.chain;
      if (chain === undefined || !chain.some((t) => t.concurrency !== undefined || t.rates !== undefined)) return view;
      return {
        ...view,
        chain: view.chain.map((t, i) => {
          const limit = chain[i]?.concurrency;
          const windows = chain[i]?.rates;
          let shown = t;
          if (limit !== undefined) {
            const state = book.state(limit);
            shown = { ...shown, load: { counts: limit.kind, ...state, saturated: state.inFlight >= state.limit } };
          }
          if (windows !== undefined) {
            shown = {
              ...shown,
              rate: windows.map((rate) => {
                const state = rates.state(rate);
                return { unit: rate.unit, counts: rate.kind, ...state, saturated: state.used >= state.limit };
              }),
            };
          }
          return shown;
        }),
      };
    });
  }

  models(): string[] {
    return listModels(this.snapshot);
  }

  on<K extends keyof RouterEvents>(event: K, listener: (event: RouterEvents[K]) => void): () => void {
    const set = this.listeners[event] as Set<(event: RouterEvents[K]) => void>;
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  observeHealthTransitions(observer: (transition: HealthTransition) => void): () => void {
    return this.cache.observeTransitions(observer);
  }

  applyHealthTransition(transition: HealthTransition): boolean {
    return this.cache.applyTransition(transition);
  }

  private emit<K extends keyof RouterEvents>(event: K, payload: RouterEvents[K]): void {
    for (const listener of this.listeners[event] as Set<(event: RouterEvents[K]) => void>) {
      try {
        listener(payload);
      } catch {
        // A metrics or logging hook must never break routing.
      }
    }
  }
}
