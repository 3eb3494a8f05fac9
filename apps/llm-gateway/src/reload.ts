/**
 * Config reload (SIGHUP and POST /admin/reload): the router re-reads its file
 * and swaps the snapshot by reference if valid, so in-flight requests finish on
 * the snapshot they started with; an invalid file keeps the old config serving.
 * Reloads run one after another, never interleaved (nor with admin writes: one shared queue).
 */
import type { ReloadResult } from '@mana/llm-router';
import type { GatewayRouter } from './context.js';
import type { Logger } from './logging.js';
import type { GatewayMetrics } from './metrics/metrics.js';
import type { SerialQueue } from './serial-queue.js';

export type ReloadTrigger = 'signal' | 'admin';

/** What a reload re-reads: the router's file, or (several replicas) the shared database. */
export interface ReloadSource {
  reload(trigger: ReloadTrigger): Promise<ReloadResult>;
  readonly config: GatewayRouter['config'];
}

export function createReloader(
  router: ReloadSource,
  metrics: GatewayMetrics,
  logger: Logger,
  serial: SerialQueue,
  /** Told of each successful reload, inside the queue (the config history reads the applied file); must not throw. */
  onReloaded: (trigger: ReloadTrigger) => Promise<void> = async () => {},
): (trigger: ReloadTrigger) => Promise<ReloadResult> {
  async function run(trigger: ReloadTrigger): Promise<ReloadResult> {
    let result: ReloadResult;
    try {
      result = await router.reload(trigger);
    } catch (error) {
      result = { ok: false, source: router.config.source, error: (error as Error)?.message ?? String(error) };
    }
    metrics.reloaded(result.ok);
    if (result.ok) {
      logger.info({ trigger, source: result.source, aliases: router.config.aliases.size }, 'config reloaded');
      await onReloaded(trigger);
    } else {
      logger.error({ trigger, source: result.source, error: result.error }, 'config reload failed: the previous config keeps serving');
    }
    return result;
  }

  return (trigger) => serial(() => run(trigger));
}
