/**
 * What the routes share: the router, metrics, logger, options and process state.
 * Built once in `gateway.ts`; a handler reaches it as `call.ctx` (call.ts).
 */
import type { ReloadResult, Router } from '@mana/llm-router';
import type { SharedState } from '@mana/llm-shared-state';
import type { ConfigStore } from './admin/config-store.js';
import type { KeyChecker } from './http/auth.js';
import type { ServiceKeys } from './keys/service-keys.js';
import type { CorsPolicy } from './http/cors.js';
import type { ResponseState } from './http/respond.js';
import type { Logger } from './logging.js';
import type { GatewayMetrics } from './metrics/metrics.js';
import type { Tracing } from './tracing/tracing.js';
import type { DashboardFiles } from './ui/dashboard-files.js';
import type { UsageRecorder } from './usage/usage-recorder.js';

/** The router methods the gateway uses (a test can pass a stand-in). */
export type GatewayRouter = Pick<
  Router,
  'config' | 'execute' | 'countTokens' | 'reload' | 'applyConfig' | 'startProbes' | 'probeNow' | 'close' | 'health' | 'aliases' | 'models' | 'on' | 'observeHealthTransitions' | 'applyHealthTransition'
>;

export interface GatewayState extends ResponseState {
  /** Config loaded and listening; false again once shutdown begins. */
  ready: boolean;
}

export interface GatewayContext {
  readonly router: GatewayRouter;
  readonly metrics: GatewayMetrics;
  readonly logger: Logger;
  readonly apiKeys: KeyChecker;
  /** Undefined when MANA_LLM_ADMIN_KEY is unset (admin routes disabled). */
  readonly adminKey: KeyChecker | undefined;
  readonly maxBodyBytes: number;
  /** Undefined when no CORS origin is configured (CORS off). */
  readonly cors: CorsPolicy | undefined;
  readonly state: GatewayState;
  /** The config file as the admin API edits it. */
  readonly configStore: ConfigStore;
  /** Undefined with `--usage off`. */
  readonly usageRecorder: UsageRecorder | undefined;
  /** Service keys (admin API), checked in memory; stored in the usage store. */
  readonly serviceKeys: ServiceKeys;
  /** Health, cooldowns and config shared with other replicas; undefined without MANA_LLM_DATABASE_URL. */
  readonly shared?: SharedState | undefined;
  /** OpenTelemetry traces of routed requests; undefined while tracing is off (the default). */
  readonly tracing?: Tracing | undefined;
  /** The dashboard's built files served under /ui/ (or why they are not there). */
  readonly dashboard: DashboardFiles;
  /** Reloads the config file, counting and logging the result. */
  reload(trigger: 'signal' | 'admin'): Promise<ReloadResult>;
}
