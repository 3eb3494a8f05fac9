/**
 * Prometheus metrics of the gateway (prom-client, own registry). Names and
 * labels are an interface: dashboards depend on them (see docs/operations.md, Metrics).
 *
 * Attempt and fallback counters are fed from the router's `attempt` events,
 * request counters and histograms from each finished request's record (finished-request.ts),
 * provider health is read from the router at scrape time.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CAPACITY_REASONS, type AliasView, type AttemptEvent, type ConfigSnapshot, type ProviderHealthView, type RequestOutcome } from '@mana/llm-router';
import type { RequestRecord } from '@mana/llm-usage-store';
import type { FinishedRequest } from '../finished-request.js';
import { FirstTokenTimes } from './first-token-times.js';
import { counterCells, LabelTree } from './label-cells.js';

/** What the usage recorder reports at scrape time. */
export interface UsageMetricsSource {
  readonly dropped: number;
  readonly failing: boolean;
  readonly queued: number;
}

/** What the shared state (several replicas, PostgreSQL) reports at scrape time. */
export interface SharedMetricsSource {
  readonly state: 'starting' | 'ok' | 'degraded';
  readonly published: number;
  readonly applied: number;
}

/** Label value when a request had no alias (a direct `provider/model`). */
export const DIRECT_ALIAS_LABEL = 'direct';
/** Label value when a request never got as far as an alias or target. */
export const NONE_LABEL = 'none';
/**
 * `target` label value for every target that is in no alias chain of the
 * current config: a direct `provider/model` is chosen by the caller, and one
 * label value per distinct id would grow the registry (and every scrape)
 * without bound. Target ids contain a `/`, so this never collides with one.
 */
export const OTHER_TARGET_LABEL = 'other';

/** A request's `alias` label: its alias, `direct` for a `provider/model` it named, `none` when it never routed that far. */
function aliasLabel(outcome: RequestOutcome | undefined): string {
  return outcome?.alias ?? (outcome?.target !== undefined ? DIRECT_ALIAS_LABEL : NONE_LABEL);
}

/** HTTP status codes as label values, made once (a request would otherwise build the string each time). */
const STATUS_LABELS = Array.from({ length: 600 }, (_, status) => String(status));

function statusLabel(status: number): string {
  return STATUS_LABELS[status] ?? String(status);
}

const CAPACITY = new Set<string>(CAPACITY_REASONS);
/** A skip because the target was full (`saturated`, `rate_limited`): a spill. */
const isCapacityReason = (reason: string): boolean => CAPACITY.has(reason);

/** `unconfigured: missing api key (X)` → `unconfigured`: keeps label cardinality bounded. */
export function reasonLabel(reason: string): string {
  const colon = reason.indexOf(':');
  return colon === -1 ? reason : reason.slice(0, colon);
}

type Observe = { observe(value: number): void };

/** A gauge set at every scrape to what `read` gives; left as it is while `read` gives undefined (no source yet). */
function scrapedGauge(registry: Registry, gauge: { readonly name: string; readonly help: string }, read: () => number | undefined): Gauge {
  const scraped: Gauge = new Gauge({
    ...gauge,
    registers: [registry],
    collect: () => {
      const value = read();
      if (value !== undefined) scraped.set(value);
    },
  });
  return scraped;
}

/**
 * A counter of a running total kept elsewhere (a queue's drops), read at every
 * scrape: it grows by what the total grew since the last one; 0 while `read`
 * gives undefined (no source).
 */
function runningTotalCounter(registry: Registry, counter: { readonly name: string; readonly help: string }, read: () => number | undefined): Counter {
  let seen = 0;
  const total: Counter = new Counter({
    ...counter,
    registers: [registry],
    collect: () => {
      const now = read() ?? 0;
      if (now > seen) total.inc(now - seen);
      seen = now;
    },
  });
  return total;
}

export class GatewayMetrics {
  readonly registry = new Registry();

  private readonly fallbackCells = counterCells(this.registry, {
    name: 'mana_llm_fallback_total',
    help: 'Times the router moved on from one target to the next, by reason.',
    labelNames: ['from_model', 'to_model', 'reason'],
  });
  private readonly aliasResolvedCells = counterCells(this.registry, {
    name: 'mana_llm_alias_resolved_total',
    help: 'Successful completions by alias and the target that answered.',
    labelNames: ['alias', 'target'],
  });
  private readonly providerHealthy = new Gauge({
    name: 'mana_llm_provider_healthy',
    help: 'Whether the provider is usable: 1 healthy, 0 unhealthy or unconfigured; no series while not known yet.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
    // Read at scrape time so the gauge is never stale (and follows providers added or dropped by a reload).
    collect: () => {
      if (this.healthReader !== undefined) this.setProviderHealth(this.healthReader());
    },
  });
  private healthReader: (() => readonly ProviderHealthView[]) | undefined;
  private configReader: (() => ConfigSnapshot) | undefined;
  /** The chain targets of the last snapshot seen (recomputed when a reload swaps it). */
  private labelled: { snapshot: ConfigSnapshot; targets: ReadonlySet<string> } | undefined;
  private readonly requestsCells = counterCells(this.registry, {
    name: 'mana_llm_requests_total',
    help: 'Routed requests (chat completions, embeddings, messages) by inbound API, alias, answering target and HTTP status.',
    labelNames: ['api', 'alias', 'target', 'status'],
  });
  /**
   * The one per-key series: its label values are bounded by the number of
   * keys (names, never secrets). No other metric has a key label (cardinality).
   */
  private readonly keyRequestsCells = counterCells(
    this.registry,
    {
      name: 'mana_llm_key_requests_total',
      help: 'Routed requests admitted with an API key, by the key\'s name (none while auth is off).',
      labelNames: ['key_name'],
    },
    // A deleted or renamed key's series goes at the next scrape: the series stay bounded by the keys there are.
    (cells, counter) => {
      const live = this.liveKeyNames?.();
      if (live !== undefined) cells.retain((name) => live.has(name), counter);
    },
  );
  private liveKeyNames: (() => ReadonlySet<string>) | undefined;
  private readonly spillCells = counterCells(this.registry, {
    name: 'mana_llm_spills_total',
    help: 'Requests that passed a target by because it was full, by alias, the full target, the one tried next and why (saturated: max_concurrency; rate_limited: rpm/tpm).',
    labelNames: ['alias', 'from', 'to', 'reason'],
  });
  private readonly hedgeCells = counterCells(this.registry, {
    name: 'mana_llm_hedges_total',
    help: 'Requests with hedge_after in force, by alias and how it went: not_needed (answered before it), won (the hedge answered first), lost (the first call did), failed (neither answered), unavailable (no target could be called at once).',
    labelNames: ['alias', 'outcome'],
  });
  private loadReader: (() => readonly AliasView[]) | undefined;
  private readonly targetInFlight = new Gauge({
    name: 'mana_llm_target_in_flight',
    help: 'Requests in flight counted against a target\'s max_concurrency (targets that declare one).',
    labelNames: ['target'] as const,
    registers: [this.registry],
    collect: () => this.setTargetLoad(),
  });
  private readonly targetQueueDepth = new Gauge({
    name: 'mana_llm_target_queue_depth',
    help: 'Requests waiting for a slot of a target at its max_concurrency (targets that declare one).',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });
  private readonly attemptsCells = counterCells(this.registry, {
    name: 'mana_llm_attempts_total',
    help: 'Planned targets by outcome (ok, skipped, failed, rejected, aborted).',
    labelNames: ['target', 'outcome'],
  });
  private readonly badEventsCells = counterCells(this.registry, {
    name: 'mana_llm_upstream_bad_events_total',
    help: 'Upstream stream events skipped because they could not be parsed (the stream went on without them), by target.',
    labelNames: ['target'],
  });
  private readonly duration = new Histogram({
    name: 'mana_llm_request_duration_seconds',
    help: 'Routed request duration by inbound API, alias and stream, from the first byte received to the last byte sent.',
    labelNames: ['api', 'alias', 'stream'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [this.registry],
  });
  private readonly ttfb = new Histogram({
    name: 'mana_llm_time_to_first_byte_seconds',
    help: 'Time from request arrival to the response head being sent, by inbound API, alias and stream.',
    labelNames: ['api', 'alias', 'stream'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly firstToken = new Histogram({
    name: 'mana_llm_time_to_first_token_seconds',
    help: 'Streams: time from the answering target\'s call start to its first content delta, by target (a saturated box shows here first).',
    labelNames: ['target'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2.5, 5, 10, 20, 30, 60],
    registers: [this.registry],
  });
  /** The same figure as a recent average per target, for /v1/aliases and /v1/health. */
  readonly firstTokenTimes = new FirstTokenTimes();
  private readonly configReload = new Counter({
    name: 'mana_llm_config_reload_total',
    help: 'Config reloads (SIGHUP or POST /admin/reload) by result.',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'mana_llm_in_flight_requests',
    help: 'Chat completion requests being processed (including open streams).',
    registers: [this.registry],
  });

  private readonly tokensCells = counterCells(this.registry, {
    name: 'mana_llm_tokens_total',
    help: 'Tokens the upstreams reported, by alias, answering target and kind (prompt, completion).',
    labelNames: ['alias', 'target', 'kind'],
  });
  private readonly costCells = counterCells(this.registry, {
    name: 'mana_llm_cost_usd_total',
    help: 'Cost in USD of the calls with a configured price, by alias and target.',
    labelNames: ['alias', 'target'],
  });
  private usageReader: (() => UsageMetricsSource) | undefined;
  private readonly usageDropped = runningTotalCounter(
    this.registry,
    { name: 'mana_llm_usage_events_dropped_total', help: 'Usage records dropped because the queue in front of the usage store was full.' },
    () => this.usageReader?.().dropped,
  );
  private readonly usageStoreUp = scrapedGauge(
    this.registry,
    { name: 'mana_llm_usage_store_up', help: '1 while usage records reach the store, 0 while its writes fail (records wait in the queue).' },
    () => {
      const source = this.usageReader?.();
      return source === undefined ? undefined : source.failing ? 0 : 1;
    },
  );
  private readonly usageQueued = scrapedGauge(this.registry, { name: 'mana_llm_usage_events_queued', help: 'Usage records waiting to be written.' }, () => this.usageReader?.().queued);

  private spansDroppedReader: (() => number) | undefined;
  private readonly spansDropped = runningTotalCounter(
    this.registry,
    {
      name: 'mana_llm_trace_spans_dropped_total',
      help: 'Trace spans lost because the queue in front of the OTLP exporter was full or their export failed (0 while tracing is off).',
    },
    () => this.spansDroppedReader?.(),
  );

  private sharedReader: (() => SharedMetricsSource) | undefined;
  private readonly sharedSeen = { published: 0, applied: 0 };
  private readonly sharedStateUp = scrapedGauge(
    this.registry,
    {
      name: 'mana_llm_shared_state_up',
      help: '1 while health, cooldowns and config are in sync with the other replicas through PostgreSQL, 0 while that is degraded (requests go on with this replica\'s own state).',
    },
    () => {
      const source = this.sharedReader?.();
      return source === undefined ? undefined : source.state === 'ok' ? 1 : 0;
    },
  );
  private readonly sharedTransitions = new Counter({
    name: 'mana_llm_shared_transitions_total',
    help: 'Health transitions this replica announced to the others (published) and learned from them that changed its cache (applied).',
    labelNames: ['direction'] as const,
    registers: [this.registry],
    collect: () => {
      const source = this.sharedReader?.();
      if (source === undefined) return;
      for (const direction of ['published', 'applied'] as const) {
        if (source[direction] > this.sharedSeen[direction]) this.sharedTransitions.inc({ direction }, source[direction] - this.sharedSeen[direction]);
        this.sharedSeen[direction] = source[direction];
      }
    },
  });

  // Histogram children by label values (see label-cells.ts).
  private readonly durationChildren = new LabelTree<Observe>((values) => this.duration.labels(...values));
  private readonly ttfbChildren = new LabelTree<Observe>((values) => this.ttfb.labels(...values));
  private readonly firstTokenChildren = new LabelTree<Observe>((values) => this.firstToken.labels(...values));

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) {
      collectDefaultMetrics({ register: this.registry });
      // Gauges named `*_total` fail `promtool check metrics`; the same numbers are in nodejs_active_*.
      for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
        this.registry.removeSingleMetric(name);
      }
    }
    this.configReload.inc({ result: 'success' }, 0);
    this.configReload.inc({ result: 'failure' }, 0);
  }

  /** Target label values come from this config only (see OTHER_TARGET_LABEL). */
  labelTargetsOf(read: () => ConfigSnapshot): void {
    this.configReader = read;
  }

  /** A target id as a label value: itself when some alias chain of the config names it, else `other`. */
  targetLabel(target: string): string {
    if (target === NONE_LABEL) return target;
    const snapshot = this.configReader?.();
    if (snapshot === undefined) return OTHER_TARGET_LABEL;
    let labelled = this.labelled;
    if (labelled?.snapshot !== snapshot) {
      const targets = new Set<string>();
      for (const alias of snapshot.aliases.values()) for (const t of alias.chain) targets.add(t.id);
      labelled = this.labelled = { snapshot, targets };
    }
    return labelled.targets.has(target) ? target : OTHER_TARGET_LABEL;
  }

  /** Feed from router `attempt` events. */
  onAttempt(event: AttemptEvent): void {
    const a = event.attempt;
    const target = this.targetLabel(a.target);
    this.attemptsCells.cell(target, a.outcome).value += 1;
    if (a.failedOver) {
      const next = event.nextTarget === undefined ? NONE_LABEL : this.targetLabel(event.nextTarget);
      this.fallbackCells.cell(target, next, reasonLabel(a.reason)).value += 1;
      if (isCapacityReason(a.reason)) this.spillCells.cell(event.alias ?? DIRECT_ALIAS_LABEL, target, next, a.reason).value += 1;
    }
  }

  /** Provider health as the router sees it; called at scrape time only (the gauge's `collect`). */
  private setProviderHealth(views: readonly ProviderHealthView[]): void {
    this.providerHealthy.reset();
    // A provider nothing has checked yet has no series: absent is "not known", 0 would claim an outage.
    for (const v of views) if (v.healthy !== null) this.providerHealthy.set({ provider: v.provider }, v.healthy ? 1 : 0);
  }

  /** Keeps `mana_llm_target_in_flight` / `_queue_depth` current at every scrape (read from the aliases view). */
  loadSource(read: () => readonly AliasView[]): void {
    this.loadReader = read;
  }

  /** One series per target with a max_concurrency (a target in several chains counted once). */
  private setTargetLoad(): void {
    const read = this.loadReader;
    if (read === undefined) return;
    this.targetInFlight.reset();
    this.targetQueueDepth.reset();
    for (const alias of read()) {
      for (const t of alias.chain) {
        if (t.load === undefined) continue;
        this.targetInFlight.set({ target: t.target }, t.load.inFlight);
        this.targetQueueDepth.set({ target: t.target }, t.load.queued);
      }
    }
  }

  /** Keeps `mana_llm_provider_healthy` current at every scrape. */
  healthSource(read: () => readonly ProviderHealthView[]): void {
    this.healthReader = read;
  }

  requestStarted(): void {
    this.inFlight.inc();
  }

  /** A request of an inbound API ended (once per request, whatever its status); its key's count too, when a key named a caller. */
  requestFinished(r: FinishedRequest): void {
    this.inFlight.dec();
    const o = r.outcome;
    const alias = aliasLabel(o);
    const resolved = o?.target ?? NONE_LABEL;
    const stream = r.stream ? 'true' : 'false';
    const target = this.targetLabel(resolved);
    this.requestsCells.cell(r.api, alias, target, statusLabel(r.status)).value += 1;
    if (r.status < 400 && resolved !== NONE_LABEL) this.aliasResolvedCells.cell(alias, target).value += 1;
    this.durationChildren.get(r.api, alias, stream).observe(r.durationMs / 1000);
    if (r.ttfbMs !== undefined) this.ttfbChildren.get(r.api, alias, stream).observe(r.ttfbMs / 1000);
    if (r.firstTokenMs !== undefined && target !== OTHER_TARGET_LABEL && target !== NONE_LABEL) {
      this.firstTokenChildren.get(target).observe(r.firstTokenMs / 1000);
      this.firstTokenTimes.observe(target, r.firstTokenMs);
    }
    if (o?.hedge !== undefined) this.hedgeCells.cell(alias, o.hedge).value += 1;
    if (r.caller !== null) this.keyRequestsCells.cell(r.caller.name).value += 1;
  }

  /** A committed stream of `target` went on without `count` unparsable events. */
  upstreamEventsSkipped(target: string, count: number): void {
    this.badEventsCells.cell(this.targetLabel(target)).value += count;
  }

  /** Usage metrics are fed only when recording is on; with `--usage off` they read 0 (and tokens and cost have no series). */
  usageSource(read: () => UsageMetricsSource): void {
    this.usageReader = read;
  }

  /** The names of the keys there are now, read at scrape time: `mana_llm_key_requests_total` keeps only theirs. */
  keyNamesSource(read: () => ReadonlySet<string>): void {
    this.liveKeyNames = read;
  }

  /** Spans dropped by tracing, read at scrape time; without tracing the counter stays 0. */
  tracingSource(read: () => number): void {
    this.spansDroppedReader = read;
  }

  /** Shared-state metrics are reported only with MANA_LLM_DATABASE_URL. */
  sharedSource(read: () => SharedMetricsSource): void {
    this.sharedReader = read;
    this.sharedTransitions.inc({ direction: 'published' }, 0);
    this.sharedTransitions.inc({ direction: 'applied' }, 0);
  }

  /** Tokens and cost of a finished request, from its usage record (every call with a price and usage counts). */
  usageRecorded(r: FinishedRequest, record: RequestRecord): void {
    const alias = aliasLabel(r.outcome);
    for (const a of record.attempts) {
      const target = this.targetLabel(a.target);
      if (a.promptTokens !== null) this.tokensCells.cell(alias, target, 'prompt').value += a.promptTokens;
      if (a.completionTokens !== null) this.tokensCells.cell(alias, target, 'completion').value += a.completionTokens;
      if (a.costUsd !== null) this.costCells.cell(alias, target).value += a.costUsd;
    }
  }

  reloaded(ok: boolean): void {
    this.configReload.inc({ result: ok ? 'success' : 'failure' });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
