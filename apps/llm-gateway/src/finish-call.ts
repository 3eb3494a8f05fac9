/**
 * The end of every call, whatever answered it (its handler, a refusal, the
 * server's 500). A request of an inbound API frees its service key's slot and
 * becomes one record (finished-request.ts), built once, which the SERVER span
 * (tracing on), the request metrics, the usage record (recording on) and the
 * log line each take as it is; any other request gets a log line at debug.
 * Called once per call, from the server's `finally` (server.ts).
 */
import type { Call } from './call.js';
import { finishedRequest } from './finished-request.js';
import { presentedAuthorization } from './http/auth.js';
import { pathOf } from './http/url.js';
import { callLogLine, requestLogLine } from './logging.js';
import type { Exchange } from './pipeline/exchange.js';
import { usageRecord } from './usage/usage-record.js';

export function finishCall(call: Call): void {
  const exchange = call.exchange;
  if (exchange !== undefined) {
    exchange.keyLease?.release();
    finishExchange(call, exchange);
    return;
  }
  const { ctx, req } = call;
  if (!ctx.logger.isLevelEnabled('debug')) return;
  ctx.logger.debug(
    callLogLine({
      requestId: call.id,
      method: req.method ?? '',
      path: pathOf(req.url).slice(0, 200),
      status: call.res.statusCode,
      durationMs: performance.now() - call.startedAt,
    }),
    'request',
  );
}

/**
 * Each consumer only where it is on: no usage row (nor its attempt records)
 * without a recorder, no log fields when the line's level is off.
 */
function finishExchange(call: Call, ex: Exchange): void {
  const { ctx } = call;
  const record = finishedRequest(call, ex, performance.now());
  ex.trace?.finished(record);
  ctx.metrics.requestFinished(record);
  const recorder = ctx.usageRecorder;
  if (recorder !== undefined) {
    // The key's fingerprint is the usage row's alone: the header is read only when one is written.
    const row = usageRecord(record, presentedAuthorization(call.req), Date.now(), recorder.replica);
    recorder.record(row);
    ctx.metrics.usageRecorded(record, row);
  }
  const level = record.status >= 500 && record.status !== 499 ? 'warn' : 'info';
  if (!ctx.logger.isLevelEnabled(level)) return;
  ctx.logger[level](requestLogLine(record), 'request');
}
