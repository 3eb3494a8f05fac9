/** GET /metrics: Prometheus text format. */
import type { ServerResponse } from 'node:http';
import type { GatewayContext } from '../context.js';
import { gatewayError } from '../http/errors.js';
import { sendError, sendText } from '../http/respond.js';

export async function handleMetrics(ctx: GatewayContext, res: ServerResponse, requestId: string): Promise<void> {
  try {
    const text = await ctx.metrics.text();
    sendText(res, ctx.state, 200, ctx.metrics.contentType, text, { 'cache-control': 'no-store' });
  } catch (error) {
    ctx.logger.error({ err: { message: (error as Error).message } }, 'metrics collection failed');
    sendError(res, ctx.state, gatewayError('internal_error', 'Metrics collection failed.'), { 'x-request-id': requestId });
  }
}
