/**
 * A finished request of an inbound API as one record, built once when its
 * call ends (finish-call.ts) from the Call (which request, when it came, who
 * called) and its Exchange (what it learned on its way). The metrics, the
 * SERVER span, the usage record and the log line each take this record and
 * render their own view of it: a fact of the request is stated here once, and
 * none of them goes back to the Call or the Exchange.
 *
 * Times are milliseconds (the log line's and the usage store's unit); the
 * metrics turn them into seconds as they observe them.
 */
import type { Priority, RequestOutcome, Usage } from '@mana/llm-router';
import { isAnswer } from './attempt-view.js';
import type { Call } from './call.js';
import type { ApiCaller } from './http/api-caller.js';
import type { Exchange } from './pipeline/exchange.js';

/**
 * What every request's log line starts with, routed or not. A request of no
 * inbound API (health, admin, a 404) is only this: its debug line takes the
 * head alone rather than a FinishedRequest with most fields absent, so the
 * routed record keeps every field required and its consumers check nothing.
 */
export interface RequestHead {
  /** X-Request-Id (call.ts). */
  readonly requestId: string;
  readonly method: string;
  /** The route's path for a routed request; the request's own path (cut to 200 characters) otherwise. */
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
}

export interface FinishedRequest extends RequestHead {
  /** The inbound API it came through (dialects/inbound-api.ts): a bounded label, a record and log field. */
  readonly api: string;
  /** The gateway's error code, when it answered one. */
  readonly code: string | undefined;
  /** The model the body asked for, cut to 200 characters (Exchange.askedFor). */
  readonly model: string | undefined;
  /** The alias the body named: the log line's alias of a request refused before routing (no outcome). */
  readonly namedAlias: string | undefined;
  readonly stream: boolean;
  readonly priority: Priority | undefined;
  /** What the router reported; undefined when the request never routed. */
  readonly outcome: RequestOutcome | undefined;
  readonly tokenUsage: Usage | undefined;
  /** Undefined when no byte was sent (the client left first). */
  readonly ttfbMs: number | undefined;
  /**
   * A committed stream: the answering attempt's own time to its first content
   * delta (its call's start, as the router records a stream's attempt), not
   * the request's, which also holds the targets failed over before it.
   */
  readonly firstTokenMs: number | undefined;
  /** Who the API key names; null with auth off, or refused. */
  readonly caller: ApiCaller | null;
  /** The request's trace id, while tracing is on. */
  readonly traceId: string | undefined;
}

/** The record of `call`, whose exchange is `ex`, ended at `now` (`performance.now()`). */
export function finishedRequest(call: Call, ex: Exchange, now: number): FinishedRequest {
  const startedAt = call.startedAt;
  return {
    requestId: call.id,
    method: call.req.method ?? 'POST',
    path: ex.codec.path,
    status: ex.status || 500,
    durationMs: now - startedAt,
    api: ex.codec.api,
    code: ex.code,
    model: ex.model,
    namedAlias: ex.namedAlias,
    stream: ex.stream,
    priority: ex.priority,
    outcome: ex.outcome,
    tokenUsage: ex.tokenUsage,
    ttfbMs: ex.ttfbAt === undefined ? undefined : ex.ttfbAt - startedAt,
    firstTokenMs: firstTokenMs(ex),
    caller: call.caller,
    traceId: ex.trace?.traceId,
  };
}

function firstTokenMs(ex: Exchange): number | undefined {
  const o = ex.outcome;
  if (!ex.stream || ex.ttfbAt === undefined || o?.target === undefined) return undefined;
  return o.attempts.findLast((a) => isAnswer(o, a))?.durationMs;
}
