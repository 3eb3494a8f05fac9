/**
 * Builds every service the routes share into one GatewayContext: the router
 * and what observes it (metrics, log lines), traces (when the OTEL_*
 * environment switches them on), usage recording, the state and
 * config shared with other replicas, reloads, the admin API's config store and
 * the dashboard's files. Each is built once, with every value it needs already
 * known (the replica's name included), so nothing is patched afterwards.
 */
import { createRouter, readConfigFile, secretsPathFor, type ConfigSnapshot, type Env } from '@mana/llm-router';
import type { SharedState } from '@mana/llm-shared-state';
import { removeStaleTempFiles } from './admin/atomic-write.js';
import { ConfigStore } from './admin/config-store.js';
import { DEFAULT_USAGE_RETENTION_MS, type GatewayOptions } from './cli.js';
import type { GatewayContext, GatewayRouter } from './context.js';
import { StaticKeys, type ApiCaller } from './http/api-caller.js';
import { KeyChecker } from './http/auth.js';
import { CorsPolicy } from './http/cors.js';
import { ServiceKeys, staticKeyId } from './keys/service-keys.js';
import { ServiceKeyStore } from '@mana/llm-usage-store';
import type { Logger } from './logging.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { createReloader } from './reload.js';
import { replicaShare } from './replicas/capacity-share.js';
import { SharedConfigSync } from './replicas/shared-config-sync.js';
import { createSharedState } from './replicas/shared-health.js';
import { createSerialQueue, type SerialQueue } from './serial-queue.js';
import { startTracing } from './tracing/start-tracing.js';
import { loadDashboardFiles } from './ui/dashboard-files.js';
import { configHistoryFeed, HISTORY_SOURCE_OF_RELOAD } from './usage/config-history.js';
import { storeLocation } from './usage/store-location.js';
import { UsageRecorder } from './usage/usage-recorder.js';

/**
 * How long a starting replica waits for PostgreSQL to read the shared state
 * before it starts on its own (degraded, syncing in the background).
 */
const SHARED_START_TIMEOUT_MS = 5_000; // 5 s

export interface ContextInput {
  readonly options: GatewayOptions;
  readonly env: Env;
  readonly logger: Logger;
  /** The config loaded at start. */
  readonly config: ConfigSnapshot;
  /** This replica's name on usage records and shared rows. */
  readonly replicaName: string;
  /** Collect Node process metrics. */
  readonly defaultMetrics: boolean | undefined;
}

export async function buildContext(input: ContextInput): Promise<GatewayContext> {
  const { options, env, logger, config } = input;
  // Shared mode splits capacities between the replicas alive, known once it has started (below): one until then.
  let aliveReplicas = (): number => 1;
  const capacityShare = options.databaseUrl === undefined ? undefined : replicaShare(() => aliveReplicas());
  const router = createRouter({ config, configPath: options.configPath, env, capacityShare, schemaChecks: { workers: options.schemaWorkers } });
  const metrics = observedMetrics(router, logger, input.defaultMetrics);
  const tracing = options.tracing === undefined ? undefined : await startTracing(options.tracing, logger);
  if (tracing !== undefined) metrics.tracingSource(() => tracing.droppedSpans);
  const usageRecorder = options.recordUsage ? await openUsageRecorder(input, router, metrics) : undefined;
  // Shared mode records the history in the same transaction as each shared write.
  const history = configHistoryFeed(options.databaseUrl === undefined ? usageRecorder : undefined, options.configPath, logger);
  await history.appliedFile('startup');

  // Reloads and admin writes share one queue: one change of the config at a time.
  const serial = createSerialQueue();
  // With MANA_LLM_DATABASE_URL several replicas share health, cooldowns and the config.
  const replicas = options.databaseUrl === undefined ? undefined : await startSharedMode(input, options.databaseUrl, router, metrics, serial);
  const sync = replicas?.configSync;
  if (replicas !== undefined) aliveReplicas = () => replicas.shared.aliveReplicas();
  const reload = createReloader(
    sync === undefined ? router : { reload: (trigger) => sync.reload(trigger), get config() { return router.config; } },
    metrics,
    logger,
    serial,
    (trigger) => history.appliedFile(HISTORY_SOURCE_OF_RELOAD[trigger]),
  );
  // Admin writes replace these files through temporary files; a process killed mid-write leaves one behind.
  const staleTemps = [...(await removeStaleTempFiles(options.configPath)), ...(await removeStaleTempFiles(secretsPathFor(options.configPath)))];
  if (staleTemps.length > 0) logger.info({ files: staleTemps }, 'temporary files of an interrupted config write removed');
  const configStore = new ConfigStore({
    path: options.configPath,
    env,
    serial,
    logger,
    apply: (snapshot) => router.applyConfig(snapshot),
    onApplied: (text, source) => history.applied(text, source),
    shared: sync,
  });
  // Read before serving: a request is checked against memory, never the database. Keys are
  // stored in the gateway's database whether usage is recorded or not (their own store).
  const keyStore = new ServiceKeyStore({
    location: storeLocation(options.dataDir, options.databaseUrl),
    onBackgroundError: (error) => logger.warn({ err: { message: error.message } }, 'key store connection error'),
  });
  const serviceKeys = new ServiceKeys({
    store: keyStore,
    staticKeyCount: options.apiKeys.length,
    logger,
    reconcile: options.databaseUrl !== undefined,
    listenUrl: options.databaseUrl,
  });
  await serviceKeys.load();
  metrics.keyNamesSource(() => new Set([...options.apiKeys.map((_, i) => staticKeyId(i + 1)), ...serviceKeys.all().map((key) => key.name)]));
  const dashboard = await loadDashboardFiles();
  if (dashboard.kind === 'missing') logger.warn({ reason: dashboard.reason }, 'dashboard not served at /ui/');
  return {
    router,
    metrics,
    logger,
    // MANA_LLM_API_KEYS first (env-1, env-2, …), then the service keys: auth is on while either holds
    // a key, and always when required (a non-loopback host without --insecure).
    apiKeys: new KeyChecker<ApiCaller>([new StaticKeys(options.apiKeys), serviceKeys], { required: options.authRequired }),
    adminKey: options.adminKey === undefined ? undefined : KeyChecker.ofKeys([options.adminKey], 'admin'),
    maxBodyBytes: options.maxBodyBytes,
    cors: options.corsOrigins.length === 0 ? undefined : new CorsPolicy(options.corsOrigins),
    state: { ready: false, draining: false },
    configStore,
    reload,
    usageRecorder,
    serviceKeys,
    shared: replicas?.shared,
    tracing,
    dashboard,
  };
}

/** Metrics fed by the router, and the router's health transitions as log lines. */
function observedMetrics(router: GatewayRouter, logger: Logger, defaultMetrics: boolean | undefined): GatewayMetrics {
  const metrics = new GatewayMetrics({ defaultMetrics });
  metrics.healthSource(() => router.health());
  metrics.loadSource(() => router.aliases());
  metrics.labelTargetsOf(() => router.config);
  router.on('attempt', (event) => metrics.onAttempt(event));
  router.on('health', (event) => {
    const fields = { provider: event.provider, healthy: event.healthy, reason: event.reason };
    if (event.healthy) logger.info(fields, 'provider healthy');
    else logger.warn(fields, 'provider unhealthy');
  });
  return metrics;
}

/** The usage recorder, its store opened now so a bad location shows at start (the gateway starts anyway). */
async function openUsageRecorder(input: ContextInput, router: GatewayRouter, metrics: GatewayMetrics): Promise<UsageRecorder> {
  const { options, logger } = input;
  const recorder = new UsageRecorder({
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    // The flag (or env) wins over the config's usage_retention, read at every run so a reload changes it.
    retentionMs: () => options.usageRetentionMs ?? router.config.usageRetentionMs ?? DEFAULT_USAGE_RETENTION_MS,
    replica: input.replicaName,
    logger,
  });
  metrics.usageSource(() => recorder.status);
  await recorder.open();
  return recorder;
}

/**
 * The state shared with the other replicas, and the shared config that
 * follows it, both started: a replica started while a provider is down skips
 * it from its first request, and serves the shared config from the start.
 */
async function startSharedMode(
  input: ContextInput,
  url: string,
  router: GatewayRouter,
  metrics: GatewayMetrics,
  serial: SerialQueue,
): Promise<{ shared: SharedState; configSync: SharedConfigSync }> {
  const { options, logger, replicaName } = input;
  const shared = createSharedState({ url, router, logger, replica: replicaName });
  const configSync = new SharedConfigSync({
    shared,
    configPath: options.configPath,
    fileText: await readConfigFile(options.configPath),
    env: input.env,
    serial,
    logger,
    replica: replicaName,
    apply: (snapshot) => router.applyConfig(snapshot),
  });
  metrics.sharedSource(() => shared.status);
  const synced = await shared.start(SHARED_START_TIMEOUT_MS, configSync);
  await configSync.pull('startup');
  if (!synced) logger.warn({ timeout_ms: SHARED_START_TIMEOUT_MS }, 'shared state not read at start: starting on this replica\'s own state, syncing when PostgreSQL answers');
  return { shared, configSync };
}
