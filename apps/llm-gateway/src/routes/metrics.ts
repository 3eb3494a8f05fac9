/** GET /metrics: Prometheus text format. */
import type { Call } from '../call.js';
import { gatewayError } from '../http/errors.js';

export async function handleMetrics(call: Call): Promise<void> {
  const { ctx } = call;
  try {
    const text = await ctx.metrics.text();
    call.text(200, ctx.metrics.contentType, text, { 'cache-control': 'no-store' });
  } catch (error) {
    ctx.logger.error({ err: { message: (error as Error).message } }, 'metrics collection failed');
    call.error(gatewayError('internal_error', 'Metrics collection failed.'));
  }
}
