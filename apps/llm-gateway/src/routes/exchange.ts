/**
 * The record of one chat completion request, and what becomes of it when the
 * request ends: one metrics update and one log line.
 */
import type { IncomingMessage } from 'node:http';
import type { Attempt, Priority, Usage } from '@mana/llm-router';
import type { GatewayContext } from '../context.js';
import { requestLogLine } from '../logging.js';
import { DIRECT_ALIAS_LABEL, NONE_LABEL } from '../metrics/metrics.js';

/** Everything one request learns on its way, for the log line and metrics. */
export class Exchange {
  status = 0;
  code: string | undefined = undefined;
  model: string | undefined = undefined;
  alias: string | undefined = undefined;
  target: string | undefined = undefined;
  stream = false;
  priority: Priority | undefined = undefined;
  attempts: readonly Attempt[] | undefined = undefined;
  usage: Usage | undefined = undefined;
  ttfbAt: number | undefined = undefined;

  constructor(
    readonly requestId: string,
    readonly startedAt: number,
  ) {}

  /** The client went away: logged and counted as 499, never sent (nobody is there to read it). */
  clientClosed(): void {
    this.status = 499;
    this.code = 'client_closed_request';
  }
}

/** Called once per request, whatever its outcome. */
export function finishExchange(ctx: GatewayContext, req: IncomingMessage, ex: Exchange): void {
  const now = performance.now();
  const status = ex.status || 500;
  const alias = ex.alias ?? (ex.target !== undefined ? DIRECT_ALIAS_LABEL : NONE_LABEL);
  ctx.metrics.requestFinished({
    alias,
    target: ex.target ?? NONE_LABEL,
    status,
    stream: ex.stream,
    durationSeconds: (now - ex.startedAt) / 1000,
    ttfbSeconds: ex.ttfbAt === undefined ? undefined : (ex.ttfbAt - ex.startedAt) / 1000,
  });
  const level = status >= 500 && status !== 499 ? 'warn' : 'info';
  if (!ctx.logger.isLevelEnabled(level)) return;
  ctx.logger[level](
    requestLogLine({
      requestId: ex.requestId,
      method: req.method ?? 'POST',
      path: '/v1/chat/completions',
      status,
      durationMs: now - ex.startedAt,
      ttfbMs: ex.ttfbAt === undefined ? undefined : ex.ttfbAt - ex.startedAt,
      model: ex.model,
      alias: ex.alias,
      target: ex.target,
      stream: ex.stream,
      priority: ex.priority,
      attempts: ex.attempts,
      code: ex.code,
      usage: ex.usage,
    }),
    'request',
  );
}
