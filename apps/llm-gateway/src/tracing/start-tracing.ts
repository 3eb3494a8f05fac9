/**
 * Starts tracing when the environment switches it on. The OpenTelemetry SDK
 * and exporter are imported here, at that moment, never at module load: with
 * tracing off (the default) not one OpenTelemetry module is loaded, and the
 * request path pays only `ctx.tracing === undefined`.
 */
import type { Logger } from '../logging.js';
import type { TracingConfig } from './tracing-config.js';
import type { Tracing } from './tracing.js';

export async function startTracing(config: TracingConfig, logger: Logger): Promise<Tracing> {
  const { createOtelTracing } = await import('./otel-tracing.js');
  return createOtelTracing(config, logger);
}
