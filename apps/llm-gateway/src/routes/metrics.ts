/**
 * GET /metrics: Prometheus text format. A collection that fails is the
 * server's 500 (logged there with its message), like any unexpected error.
 */
import type { Call } from '../call.js';

export async function handleMetrics(call: Call): Promise<void> {
  const { metrics } = call.ctx;
  call.text(200, metrics.contentType, await metrics.text(), { 'cache-control': 'no-store' });
}
