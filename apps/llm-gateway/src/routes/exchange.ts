/**
 * The record of one request of an inbound API (chat completions, embeddings,
 * messages, responses, count_tokens), and what becomes of it when the request
 * ends (the server finishes every call, finish-call.ts): one metrics update,
 * its SERVER span ended (while tracing is on), one usage record and one log
 * line. What routing did comes in one piece, the router's outcome; nothing
 * here recounts or re-derives it.
 */
import type { IncomingMessage } from 'node:http';
import type { Priority, RequestOutcome, Usage } from '@mana/llm-router';
import type { GatewayContext } from '../context.js';
import type { ApiCaller } from '../http/api-caller.js';
import type { KeyLease } from '../keys/key-concurrency.js';
import { presentedAuthorization } from '../http/auth.js';
import type { Headers } from '../http/respond.js';
import { requestLogLine } from '../logging.js';
import { DIRECT_ALIAS_LABEL, NONE_LABEL } from '../metrics/metrics.js';
import type { RequestTrace } from '../tracing/tracing.js';
import { usageRecord } from '../usage/usage-record.js';
import type { InboundRoute } from '../dialects/inbound-api.js';

/** Everything one request learns on its way, for the response head, the log line and metrics. */
export class Exchange {
  status = 0;
  code: string | undefined = undefined;
  /** The model the body asked for, cut to 200 characters for the log line and record (see askedFor). */
  model: string | undefined = undefined;
  /** The alias the body named, as written (header-safe): for X-Mana-LLM-Alias and the log line of a request refused before routing. */
  namedAlias: string | undefined = undefined;
  stream = false;
  priority: Priority | undefined = undefined;
  /** What the router reported (on its result or its error); undefined before routing. */
  outcome: RequestOutcome | undefined = undefined;
  tokenUsage: Usage | undefined = undefined;
  ttfbAt: number | undefined = undefined;
  /** Its trace (the SERVER span the router's attempts go under); undefined while tracing is off. */
  trace: RequestTrace | undefined = undefined;
  /** Its slot of its service key's max_concurrency, while it holds one (released when it ends). */
  keyLease: KeyLease | undefined = undefined;

  /** Notes the model the body asked for (a client may send any length: the records keep 200 characters). */
  askedFor(model: string | undefined): void {
    this.model = model === undefined ? undefined : model.slice(0, 200);
  }

  constructor(
    readonly requestId: string,
    readonly startedAt: number,
    /** The API it came through: its route and `api` name it on the log line, the record and the metrics. */
    readonly codec: Pick<InboundRoute, 'path' | 'api'>,
    /** Who its API key names (null with auth off, or refused): on the record, the log line and the key metric. */
    readonly caller: ApiCaller | null,
  ) {}

  /** The client went away: logged and counted as 499, never sent (nobody is there to read it). */
  clientClosed(): void {
    this.status = 499;
    this.code = 'client_closed_request';
  }

  /**
   * Adds the `X-Mana-LLM-*` headers, from the outcome as the router reported it
   * (the call writes them with its X-Request-Id, call.ts).
   */
  addRoutingHeaders(headers: Headers): void {
    const o = this.outcome;
    if (o === undefined) {
      if (this.namedAlias !== undefined) headers['x-mana-llm-alias'] = this.namedAlias;
      return;
    }
    if (o.alias !== undefined) headers['x-mana-llm-alias'] = o.alias;
    if (o.target !== undefined) headers['x-mana-llm-resolved'] = o.target;
    if (o.attempts.length > 0) headers['x-mana-llm-attempts'] = o.upstreamCalls;
  }
}

/**
 * A committed stream: the answering attempt's own time (its call's start to its
 * first content delta, as the router records a stream's attempt), not the
 * request's, which also holds the targets failed over before it.
 */
function firstTokenSeconds(ex: Exchange): number | undefined {
  const o = ex.outcome;
  if (!ex.stream || ex.ttfbAt === undefined || o?.target === undefined) return undefined;
  const answered = o.attempts.findLast((a) => a.target === o.target && a.outcome === 'ok');
  return answered === undefined ? undefined : answered.durationMs / 1000;
}

/** Called once per request, whatever its outcome. */
export function finishExchange(ctx: GatewayContext, req: IncomingMessage, ex: Exchange): void {
  const now = performance.now();
  const status = ex.status || 500;
  const o = ex.outcome;
  const trace = ex.trace;
  trace?.finished({ status, code: ex.code, model: ex.model, outcome: o });
  const alias = o?.alias ?? (o?.target !== undefined ? DIRECT_ALIAS_LABEL : NONE_LABEL);
  ctx.metrics.requestFinished({
    api: ex.codec.api,
    alias,
    target: o?.target ?? NONE_LABEL,
    status,
    stream: ex.stream,
    durationSeconds: (now - ex.startedAt) / 1000,
    ttfbSeconds: ex.ttfbAt === undefined ? undefined : (ex.ttfbAt - ex.startedAt) / 1000,
    firstTokenSeconds: firstTokenSeconds(ex),
    hedge: o?.hedge,
  });
  if (ex.caller !== null) ctx.metrics.keyRequested(ex.caller.name);
  if (ctx.usageRecorder !== undefined) {
    const record = usageRecord(
      {
        requestId: ex.requestId,
        api: ex.codec.api,
        status,
        code: ex.code,
        model: ex.model,
        stream: ex.stream,
        priority: ex.priority,
        outcome: o,
        tokenUsage: ex.tokenUsage,
        durationMs: now - ex.startedAt,
        ttfbMs: ex.ttfbAt === undefined ? undefined : ex.ttfbAt - ex.startedAt,
        authorization: presentedAuthorization(req),
        caller: ex.caller,
        traceId: trace?.traceId,
      },
      Date.now(),
      ctx.usageRecorder.replica,
    );
    ctx.usageRecorder.record(record);
    ctx.metrics.usageRecorded(alias, record);
  }
  const level = status >= 500 && status !== 499 ? 'warn' : 'info';
  if (!ctx.logger.isLevelEnabled(level)) return;
  ctx.logger[level](
    requestLogLine({
      requestId: ex.requestId,
      method: req.method ?? 'POST',
      path: ex.codec.path,
      api: ex.codec.api,
      status,
      durationMs: now - ex.startedAt,
      ttfbMs: ex.ttfbAt === undefined ? undefined : ex.ttfbAt - ex.startedAt,
      model: ex.model,
      alias: o?.alias ?? (o === undefined ? ex.namedAlias : undefined),
      target: o?.target,
      stream: ex.stream,
      priority: ex.priority,
      attempts: o?.attempts,
      hedge: o?.hedge,
      code: ex.code,
      tokenUsage: ex.tokenUsage,
      traceId: trace?.traceId,
      key: ex.caller?.name,
    }),
    'request',
  );
}
