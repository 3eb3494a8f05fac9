/**
 * Graceful shutdown: stop accepting connections, mark not ready, let in-flight
 * requests and open streams finish within a bounded grace period, then close
 * whatever is left and stop the router (probes, upstream pools), and send what
 * is queued: usage records, and the spans of the requests just finished.
 */
import type { Server } from 'node:http';
import type { GatewayRouter, GatewayState } from './context.js';
import type { ServiceKeys } from './keys/service-keys.js';
import type { Logger } from './logging.js';
import type { Tracing } from './tracing/tracing.js';
import type { UsageRecorder } from './usage/usage-recorder.js';

/** How long the queued usage records may take to reach the store at exit. */
const USAGE_FLUSH_TIMEOUT_MS = 5_000; // 5 s

/**
 * Queued spans get what is left of the grace period, but at least this long:
 * a drain that used the whole grace still sends its last requests' spans.
 */
const TRACE_FLUSH_MIN_MS = 1_000; // 1 s

/** How often idle keep-alive connections are closed while draining. */
const IDLE_SWEEP_MS = 100;

export interface ShutdownResult {
  /** True when every request finished within the grace period. */
  readonly drained: boolean;
  readonly durationMs: number;
}

export async function drainAndClose(
  server: Server,
  router: GatewayRouter,
  state: GatewayState,
  graceMs: number,
  logger: Logger,
  usageRecorder?: UsageRecorder,
  tracing?: Tracing,
  serviceKeys?: ServiceKeys,
): Promise<ShutdownResult> {
  const started = performance.now();
  state.ready = false;
  state.draining = true;

  let drained = true;
  await new Promise<void>((resolve) => {
    // Responses sent from now on carry `Connection: close`; connections that
    // become idle (a stream that just ended on a keep-alive socket) are swept.
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    sweep.unref();
    const deadline = setTimeout(() => {
      drained = false;
      logger.warn({ grace_ms: graceMs }, 'shutdown grace period over: closing the remaining connections');
      server.closeAllConnections();
    }, graceMs);
    deadline.unref();
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });

  try {
    await router.close();
  } catch (error) {
    logger.warn({ err: { message: (error as Error)?.message } }, 'router close failed');
  }
  // After the drain every finished request has queued its record and ended its spans: both go out side by side.
  const traceFlushMs = Math.max(TRACE_FLUSH_MIN_MS, graceMs - (performance.now() - started));
  // The keys' last uses go to the store before it closes.
  await serviceKeys?.close().catch(() => undefined);
  await Promise.all([closeUsage(usageRecorder, logger), flushTraces(tracing, traceFlushMs, logger)]);
  return { drained, durationMs: performance.now() - started };
}

async function closeUsage(usageRecorder: UsageRecorder | undefined, logger: Logger): Promise<void> {
  try {
    await usageRecorder?.close(USAGE_FLUSH_TIMEOUT_MS);
    if (usageRecorder !== undefined && usageRecorder.status.queued > 0) logger.warn({ lost: usageRecorder.status.queued }, 'usage records not written at exit');
  } catch (error) {
    logger.warn({ err: { message: (error as Error)?.message } }, 'usage store close failed');
  }
}

async function flushTraces(tracing: Tracing | undefined, timeoutMs: number, logger: Logger): Promise<void> {
  if (tracing !== undefined && !(await tracing.shutdown(timeoutMs))) logger.warn({ timeout_ms: Math.round(timeoutMs) }, 'queued spans not all exported at exit');
}
