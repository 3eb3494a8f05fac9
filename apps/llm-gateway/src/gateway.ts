/**
 * Startup: config → the bound address → every service (build-context.ts) →
 * serving → ready. Used by `main.ts` (the process) and `demo.ts`
 * (in-process), so both run the same gateway.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { loadConfigFile, type ConfigSnapshot, type ReloadResult } from '@mana/llm-router';
import { buildContext } from './build-context.js';
import type { GatewayOptions } from './cli.js';
import type { GatewayContext, GatewayRouter } from './context.js';
import type { Logger } from './logging.js';
import type { ReloadTrigger } from './reload.js';
import { bindGatewayServer } from './server.js';
import { drainAndClose, type ShutdownResult } from './shutdown.js';
import { describeTracing } from './tracing/tracing-config.js';

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

export async function startGateway(options: GatewayOptions, start: StartOptions): Promise<Gateway> {
  const { logger } = start;
  const env = start.env ?? process.env;
  const config = await loadConfigFile(options.configPath, { env });
  // The address is bound before anything is built: a replica's default name is
  // <hostname>:<port> with the port actually bound, which only the system knows
  // with --port 0 (the tests' and the demo's), and replicas on one host must not
  // share a name (each ignores the announcements carrying its own). Binding is not
  // serving: until `serve`, the server closes every connection it accepts.
  const bound = await bindGatewayServer(options.port, options.host, options.requestTimeoutMs);
  const replicaName = options.replicaName ?? `${hostname()}:${bound.address.port}`;
  let context: GatewayContext;
  try {
    context = await buildContext({ options, env, logger, config, replicaName, defaultMetrics: start.defaultMetrics });
  } catch (error) {
    await bound.close();
    throw error;
  }
  const { router, state, usageRecorder, shared } = context;
  bound.serve(context);
  router.startProbes();
  state.ready = true;
  warnUnconfigured(context, config);

  const url = urlOf(bound.address);
  logger.info(
    {
      url,
      // The process to signal (`kill -HUP <pid>`): under `pnpm start` it is not the pid of the command run.
      pid: process.pid,
      config: config.source,
      aliases: [...config.aliases.keys()],
      auth: authSummary(options.authRequired, options.apiKeys.length, context.serviceKeys.count),
      admin: options.adminKey !== undefined ? 'on' : 'off',
      cors: options.corsOrigins.length === 0 ? 'off' : options.corsOrigins.join(', '),
      usage: usageRecorder === undefined ? 'off' : usageRecorder.store.description,
      replica: replicaName,
      shared: shared === undefined ? 'off' : shared.status.state,
      tracing: describeTracing(options.tracing),
      dashboard: context.dashboard.kind === 'ready' ? `${url}/ui/` : 'not built',
    },
    'listening',
  );

  let shuttingDown: Promise<ShutdownResult> | undefined;
  return {
    url,
    port: bound.address.port,
    server: bound.server,
    router,
    context,
    reload: context.reload,
    shutdown(graceMs = options.shutdownGraceMs) {
      shuttingDown ??= drainAndClose(bound.server, router, state, graceMs, logger, usageRecorder, context.tracing, context.serviceKeys).finally(() => shared?.close());
      return shuttingDown;
    },
  };
}

/** Only providers some alias calls: an unused built-in without its key is not a problem worth a warning. */
function warnUnconfigured(context: GatewayContext, config: ConfigSnapshot): void {
  const used = new Set<string>();
  for (const alias of config.aliases.values()) for (const target of alias.chain) used.add(target.provider);
  const unconfigured = context.router.health().filter((p) => !p.configured && used.has(p.provider));
  if (unconfigured.length > 0) {
    context.logger.warn(
      { providers: unconfigured.map((p) => `${p.provider}: ${p.unconfiguredReason ?? 'unconfigured'}`) },
      'some providers are unconfigured: their targets are skipped',
    );
  }
}

/** `on (2 keys)`, `on (1 key, 3 service keys)` or `off`. */
/**
 * The listening line's `auth`: `off`, `on (2 keys, 1 service key)`, or, when
 * required, `required (…)` with the service keys always counted, so that
 * `required (0 service keys)` says every request is refused until one is made.
 */
function authSummary(required: boolean, staticKeys: number, serviceKeys: number): string {
  if (!required && staticKeys + serviceKeys === 0) return 'off';
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const counts = [staticKeys > 0 ? plural(staticKeys, 'key') : '', serviceKeys > 0 || required ? plural(serviceKeys, 'service key') : ''];
  return `${required ? 'required' : 'on'} (${counts.filter((p) => p !== '').join(', ')})`;
}

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
