/**
 * The end of every call, whatever answered it (its handler, a refusal, the
 * server's 500): a request of an inbound API is counted in the request
 * metrics, gets its usage record and its log line (routes/exchange.ts), and
 * frees its service key's slot; any other request gets a log line at debug.
 * Called once per call, from the server's `finally` (server.ts).
 */
import type { Call } from './call.js';
import { pathOf } from './http/url.js';
import { requestLogLine } from './logging.js';
import { finishExchange } from './routes/exchange.js';

export function finishCall(call: Call): void {
  const { ctx, req, exchange } = call;
  if (exchange !== undefined) {
    exchange.keyLease?.release();
    finishExchange(ctx, req, exchange);
    return;
  }
  if (!ctx.logger.isLevelEnabled('debug')) return;
  ctx.logger.debug(
    requestLogLine({
      requestId: call.id,
      method: req.method ?? '',
      path: pathOf(req.url).slice(0, 200),
      status: call.res.statusCode,
      durationMs: performance.now() - call.startedAt,
    }),
    'request',
  );
}
