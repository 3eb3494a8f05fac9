/**
 * Wiring: config → router → metrics/logging → HTTP server. Used by `main.ts`
 * (the process) and `demo.ts` (in-process), so both run the same gateway.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { createRouter, loadConfigFile, readConfigFile, secretsPathFor, type ReloadResult } from '@mana/llm-router';
import { removeStaleTempFiles } from './admin/atomic-write.js';
import { ConfigStore } from './admin/config-store.js';
import { DEFAULT_USAGE_RETENTION_MS, type GatewayOptions } from './cli.js';
import type { GatewayContext, GatewayRouter, GatewayState } from './context.js';
import { KeyChecker } from './http/auth.js';
import { CorsPolicy } from './http/cors.js';
import type { Logger } from './logging.js';
import { GatewayMetrics } from './metrics/metrics.js';
import { createReloader, type ReloadTrigger } from './reload.js';
import { SharedConfigSync } from './replicas/shared-config-sync.js';
import { createSharedState } from './replicas/shared-health.js';
import { createSerialQueue } from './serial-queue.js';
import { loadDashboardFiles } from './ui/dashboard-files.js';
import { createGatewayServer } from './server.js';
import { drainAndClose, type ShutdownResult } from './shutdown.js';
import { configHistoryFeed, RELOAD_SOURCES } from './usage/config-history.js';
import { UsageRecorder } from './usage/usage-recorder.js';

export interface Gateway {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly router: GatewayRouter;
  readonly context: GatewayContext;
  reload(trigger: ReloadTrigger): Promise<ReloadResult>;
  /** Drains in-flight requests (up to `graceMs`), closes the server and the router. Idempotent. */
  shutdown(graceMs?: number): Promise<ShutdownResult>;
}

export interface StartOptions {
  readonly logger: Logger;
  readonly env?: Record<string, string | undefined>;
  /** Collect Node process metrics (default true). */
  readonly defaultMetrics?: boolean;
}

/**
 * How long a starting replica waits for PostgreSQL to read the shared state
 * before it starts on its own (degraded, syncing in the background).
 */
const SHARED_START_TIMEOUT_MS = 5_000; // 5 s

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(
        new Error(
          error.code === 'EADDRINUSE'
            ? `Port ${port} on ${host} is already in use: stop the other process or pass --port.`
            : `Cannot listen on ${host}:${port}: ${error.message}`,
        ),
      );
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

export async function startGateway(options: GatewayOptions, start: StartOptions): Promise<Gateway> {
  const { logger } = start;
  const env = start.env ?? process.env;
  const config = await loadConfigFile(options.configPath, { env });
  const router = createRouter({ config, configPath: options.configPath, env });

  const metrics = new GatewayMetrics({ defaultMetrics: start.defaultMetrics });
  metrics.healthSource(() => router.health());
  metrics.labelTargetsOf(() => router.config);
  router.on('attempt', (event) => metrics.onAttempt(event));
  router.on('health', (event) => {
    const fields = { provider: event.provider, healthy: event.healthy, reason: event.reason };
    if (event.healthy) logger.info(fields, 'provider healthy');
    else logger.warn(fields, 'provider unhealthy');
  });

  // Until listening, the configured port; then the real one (port 0 picks one).
  let replicaName = options.replicaName ?? `${hostname()}:${options.port}`;
  const replica = (): string => replicaName;
  // With MANA_LLM_DATABASE_URL several replicas share health, cooldowns and the config.
  let configSync: SharedConfigSync | undefined;
  const shared = options.databaseUrl === undefined ? undefined : createSharedState({ url: options.databaseUrl, router, logger, replica, config: () => configSync });

  const usage = options.usage
    ? new UsageRecorder({
        dataDir: options.dataDir,
        databaseUrl: options.databaseUrl,
        // The flag (or env) wins over the config's usage_retention, read at every run so a reload changes it.
        retentionMs: () => options.usageRetentionMs ?? router.config.usageRetentionMs ?? DEFAULT_USAGE_RETENTION_MS,
        logger,
      })
    : undefined;
  if (usage !== undefined) {
    metrics.usageSource(() => usage.status);
    await usage.open();
  }
  // Shared mode records the history in the same transaction as each shared write.
  const history = configHistoryFeed(shared === undefined ? usage : undefined, options.configPath, logger);
  await history.appliedFile('startup');

  const state: GatewayState = { ready: false, draining: false };
  // Reloads and admin writes share one queue: one change of the config at a time.
  const serial = createSerialQueue();
  if (shared !== undefined) {
    configSync = new SharedConfigSync({
      shared,
      configPath: options.configPath,
      fileText: await readConfigFile(options.configPath),
      env,
      serial,
      logger,
      replica,
      apply: (snapshot) => router.applyConfig(snapshot),
    });
    metrics.sharedSource(() => shared.status);
    // Before listening: a replica started while a provider is down skips it from its first request.
    const synced = await shared.start(SHARED_START_TIMEOUT_MS);
    await configSync.pull('startup');
    if (!synced) logger.warn({ timeout_ms: SHARED_START_TIMEOUT_MS }, 'shared state not read at start: starting on this replica\'s own state, syncing when PostgreSQL answers');
  }
  const sync = configSync;
  const reload = createReloader(
    sync === undefined ? router : { reload: (trigger) => sync.reload(trigger), get config() { return router.config; } },
    metrics,
    logger,
    serial,
    (trigger) => history.appliedFile(RELOAD_SOURCES[trigger]),
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
    shared: configSync,
  });
  const dashboard = await loadDashboardFiles();
  if (dashboard.kind === 'missing') logger.warn({ reason: dashboard.reason }, 'dashboard not served at /ui/');
  const context: GatewayContext = {
    router,
    metrics,
    logger,
    apiKeys: new KeyChecker(options.apiKeys),
    adminKey: options.adminKey === undefined ? undefined : new KeyChecker([options.adminKey]),
    maxBodyBytes: options.maxBodyBytes,
    cors: options.corsOrigins.length === 0 ? undefined : new CorsPolicy(options.corsOrigins),
    state,
    configStore,
    reload,
    usage,
    shared,
    dashboard,
  };
  const server = createGatewayServer(context, options.requestTimeoutMs);
  let address: AddressInfo;
  try {
    address = await listen(server, options.port, options.host);
  } catch (error) {
    await router.close();
    await shared?.close();
    await usage?.close(0);
    throw error;
  }
  if (options.replicaName === undefined) replicaName = `${hostname()}:${address.port}`;
  if (usage !== undefined) usage.replica = replicaName;
  router.startProbes();
  state.ready = true;

  // Only providers some alias calls: an unused built-in without its key is not a problem worth a warning.
  const used = new Set<string>();
  for (const alias of config.aliases.values()) for (const target of alias.chain) used.add(target.provider);
  const unconfigured = router.health().filter((p) => !p.configured && used.has(p.provider));
  if (unconfigured.length > 0) {
    logger.warn(
      { providers: unconfigured.map((p) => `${p.provider}: ${p.unconfiguredReason ?? 'unconfigured'}`) },
      'some providers are unconfigured: their targets are skipped',
    );
  }

  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info(
    {
      url,
      // The process to signal (`kill -HUP <pid>`): under `pnpm start` it is not the pid of the command run.
      pid: process.pid,
      config: config.source,
      aliases: [...config.aliases.keys()],
      auth: options.apiKeys.length > 0 ? `on (${options.apiKeys.length} key${options.apiKeys.length === 1 ? '' : 's'})` : 'off',
      admin: options.adminKey !== undefined ? 'on' : 'off',
      cors: options.corsOrigins.length === 0 ? 'off' : options.corsOrigins.join(', '),
      usage: usage === undefined ? 'off' : usage.store.description,
      replica: replicaName,
      shared: shared === undefined ? 'off' : shared.status.state,
      dashboard: dashboard.kind === 'ready' ? `${url}/ui/` : 'not built',
    },
    'listening',
  );

  let shuttingDown: Promise<ShutdownResult> | undefined;
  return {
    url,
    port: address.port,
    server,
    router,
    context,
    reload,
    shutdown(graceMs = options.shutdownGraceMs) {
      shuttingDown ??= drainAndClose(server, router, state, graceMs, logger, usage).finally(() => shared?.close());
      return shuttingDown;
    },
  };
}
