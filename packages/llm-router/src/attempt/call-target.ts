import type { Adapter, AdapterCall, HttpFailure } from '../adapters/adapter.js';
import { abortedError } from '../errors.js';
import type {
  AliasConfig,
  AnswerFacts,
  CallObserver,
  ChatRequestBody,
  ProviderConfig,
  ResultBase,
  RouterRequest,
  RouterResult,
  StreamResult,
  TargetConfig,
  Usage,
} from '../types.js';
import { answerFacts } from './answer-facts.js';
import type { AttemptLog } from './attempt-log.js';
import type { AttemptReason } from './attempt-reasons.js';
import { classifyFailure, type Decision, type Failure } from './classify-error.js';
import type { ExecuteDeps } from './execute-deps.js';
import { FirstByteTimer } from './first-byte-timer.js';
import type { HedgeLeg } from './hedge-race.js';
import { Lease } from './lease.js';
import type { OperationSpec } from './operation.js';
import type { AnswerChecks } from './inspect-answer.js';
import { readUntilCommit, type StreamEnd } from './stream-commit.js';
import { scrubErrorBody } from '../health/redact.js';

/** `cancelled`: the call lost a `hedge_after` race (recorded by the race, never counted against the target). */
export type CallOutcome =
  | { readonly kind: 'result'; readonly result: RouterResult }
  | { readonly kind: 'failed'; readonly decision: Decision }
  | { readonly kind: 'cancelled' };

const CANCELLED: CallOutcome = Object.freeze({ kind: 'cancelled' });

export interface TargetCall {
  readonly operation: OperationSpec;
  readonly adapter: Adapter;
  readonly provider: ProviderConfig;
  readonly target: TargetConfig;
  readonly request: RouterRequest;
  readonly alias: string | undefined;
  readonly config: AliasConfig;
  readonly deps: ExecuteDeps;
  readonly log: AttemptLog;
  /** What the request holds (its background slot): a committed stream takes it over. */
  readonly requestLease: Lease;
  /** The target's `max_concurrency` slot, when it declares one: a committed stream takes it over. */
  readonly slot?: Lease | undefined;
  /** What makes a 200 answer fail over (the alias's `fail_over_on`), worked out once per request. */
  readonly answerChecks: AnswerChecks;
  /**
   * The request's body without the optional parameters this target cannot
   * honour (target-parameters.ts), the note its attempt carries and the hosted
   * tools it goes without (for the result); undefined: the request's own body (and text) goes.
   */
  readonly trimmed?: { readonly body: ChatRequestBody; readonly note: string; readonly droppedTools: readonly string[] | undefined } | undefined;
  /**
   * The call's side of a `hedge_after` race (hedge-race.ts), when one may run:
   * its signal replaces the request's for the upstream call, and the call
   * claims the race before it commits an answer. Undefined: no race, no cost.
   */
  readonly leg?: HedgeLeg | undefined;
}

/**
 * One adapter call against one target, carried through classification and
 * health bookkeeping. Returns a final result (ok, or a 4xx to relay) or the
 * failure decision; throws only RouterError('aborted').
 */
export async function callTarget(c: TargetCall): Promise<CallOutcome> {
  const started = c.deps.now();
  const lease = new Lease();
  const leg = c.leg;
  const timer = new FirstByteTimer(leg ?? c.request.signal, c.target.settings.firstByteTimeoutMs);
  lease.hold(() => timer.dispose());
  const id = c.target.id;
  c.deps.inFlight.inc(id);
  lease.hold(() => c.deps.inFlight.dec(id));
  // Undefined unless the request has an observer (the gateway's tracing).
  const watch = c.log.callStarted(c.target, c.provider);
  if (leg !== undefined) {
    leg.call = { target: c.target, started };
    lease.hold(() => (leg.call = undefined));
  }
  const call: AdapterCall<RouterRequest['body']> = {
    provider: c.provider,
    target: c.target,
    body: c.trimmed?.body ?? c.request.body,
    // The client's text says what its body holds, not what the trimmed one does.
    bodyText: c.trimmed === undefined ? c.request.bodyText : undefined,
    signal: timer,
    firstByte: timer,
    clientHeaders: c.request.clientHeaders,
    original: c.request.original,
    traceHeaders: c.provider.propagateTrace ? watch?.headers : undefined,
  };
  try {
    if (!c.request.stream) return await complete(c, call, started, watch);
    return await stream(c, call as AdapterCall, timer, lease, started, watch);
  } catch (error) {
    if (c.request.signal?.aborted === true) {
      c.log.add(c.target, 'aborted', 'aborted', c.deps.now() - started);
      throw abortedError({ outcome: c.log.outcome(c.target.id), cause: error });
    }
    // The other call of the race answered first and closed this one: failed() leaves it to the race's record.
    return failed(c, { kind: 'error', error }, started);
  } finally {
    // Unconditional: a committed stream took everything over, leaving this lease empty.
    lease.release();
  }
}

async function complete(c: TargetCall, call: AdapterCall<RouterRequest['body']>, started: number, watch: CallObserver | undefined): Promise<CallOutcome> {
  const res = await c.operation.call(c.adapter, call);
  if (!res.ok) return httpFailed(c, res, started);
  const invalid = await c.operation.invalidAnswer(res.body, c.request, c.config, c.answerChecks);
  // A rejected answer was still billed: its usage stays on the attempt.
  if (invalid !== undefined) return failed(c, invalid, started, c.operation.usage(res.body));
  // A race's answer that came second was billed too: its tokens go on the attempt the race recorded.
  if (c.leg !== undefined && !c.leg.claim()) return lostRace(c, c.operation.usage(res.body));
  const reshaped = c.operation.conform(res.body, c.request);
  const usage = c.operation.usage(res.body);
  c.deps.health.reportSuccess(c.provider.name);
  // A native answer goes to the caller as the upstream wrote it; its translation (res.body) served the checks and usage.
  const native = res.native;
  return {
    kind: 'result',
    result: {
      kind: 'json',
      ...settle(c, 'ok', 'ok', started, res, undefined, watch === undefined ? undefined : answerFacts(res.body, usage)),
      status: res.status,
      protocol: native?.protocol ?? 'openai',
      body: native?.body ?? res.body,
      text: native !== undefined ? native.text : reshaped ? undefined : res.text,
      usage,
      ...(c.config.embeddingSpace === undefined ? {} : { embeddingSpace: c.config.embeddingSpace }),
    },
  };
}

async function stream(c: TargetCall, call: AdapterCall, timer: FirstByteTimer, lease: Lease, started: number, watch: CallObserver | undefined): Promise<CallOutcome> {
  const open = await c.adapter.stream(call);
  if (!open.ok) return httpFailed(c, open, started);
  // The first-byte clock runs until the commit (first delta): that is the wait a user notices.
  // Released when the committed stream ends, whichever way (read to the end, broken, aborted, or returned unread).
  const streamLease = new Lease();
  const pre = await readUntilCommit(
    open,
    c.target.id,
    c.request.signal,
    c.answerChecks.checks,
    (end) => streamEnded(c, streamLease, end, open.decoder.skippedEvents),
    c.target.settings.maxPreCommitBytes,
    c.target.settings.streamIdleTimeoutMs,
  );
  timer.stop();
  if (pre.kind === 'failed') return failed(c, pre.failure, started);
  if (c.leg !== undefined && !c.leg.claim()) {
    // The other call of the race committed first: close this stream before anything of it is relayed.
    await pre.stream.return();
    return CANCELLED;
  }
  lease.handOver(streamLease);
  c.requestLease.handOver(streamLease);
  c.slot?.handOver(streamLease);
  c.deps.health.reportSuccess(c.provider.name);
  const events = pre.stream;
  // Told at the commit (its first event says the answer's id and model) and again when the stream ends.
  if (watch !== undefined) events.observe(watch);
  const base = settle(c, 'ok', 'ok', started, open, undefined, watch === undefined ? undefined : events.startFacts());
  // A break after the commit reports the same outcome (the attempts that led here).
  events.outcome = base.outcome;
  const result: StreamResult = {
    kind: 'stream',
    ...base,
    protocol: open.native ?? 'openai',
    events,
    get usage() {
      return events.usage;
    },
    get skippedEvents() {
      return open.decoder.skippedEvents;
    },
  };
  return { kind: 'result', result };
}

/** A committed stream is over (called once): free what it holds; a break after the commit counts against the provider. */
function streamEnded(c: TargetCall, streamLease: Lease, end: StreamEnd, skippedEvents: number): void {
  streamLease.release();
  // The attempt was recorded `ok` at the commit; it also says what the stream went on without.
  if (skippedEvents > 0) c.log.note(c.target.id, `skipped ${skippedEvents} unparsable stream event${skippedEvents === 1 ? '' : 's'}`);
  if (end.kind === 'interrupted') {
    c.deps.health.reportFailure(c.provider.name, `stream_interrupted: ${end.reason}`, c.target.settings);
  }
}

function httpFailed(c: TargetCall, res: HttpFailure, started: number): CallOutcome {
  if (c.leg?.cancelled === true) return CANCELLED;
  const decision = classify(c, { kind: 'http', response: res });
  // Any HTTP answer proves the provider reachable; the breaker counts connection-level failures only.
  c.deps.health.reportSuccess(c.provider.name);
  if (decision.action === 'fail_over') return recordAttempt(c, decision, started);
  // A rejection to relay ends the request like an answer: it must win the race first.
  if (c.leg !== undefined && !c.leg.claim()) return CANCELLED;
  return {
    kind: 'result',
    result: {
      kind: 'upstream_error',
      ...settle(c, 'rejected', decision.reason, started, res, decision.detail),
      status: res.status,
      body: scrubErrorBody(res.body, c.provider.secrets),
      contentType: res.contentType,
    },
  };
}

/**
 * The attempt that ends the request (an answer, or a rejection to relay):
 * counted, logged, and the fields every result carries.
 */
function settle(
  c: TargetCall,
  outcome: 'ok' | 'rejected',
  reason: AttemptReason,
  started: number,
  res: { readonly status: number; readonly headers: Readonly<Record<string, string>> },
  detail?: string,
  answer?: AnswerFacts,
): ResultBase {
  c.log.add(c.target, outcome, reason, c.deps.now() - started, { status: res.status, detail: withNote(detail, c), answer });
  const droppedTools = c.trimmed?.droppedTools;
  return { outcome: c.log.outcome(c.target.id), headers: res.headers, ...(droppedTools === undefined ? {} : { droppedTools }) };
}

function failed(c: TargetCall, failure: Failure, started: number, usage?: Usage): CallOutcome {
  // Lost the race meanwhile: the race recorded the attempt; what went wrong after that is nobody's concern.
  if (c.leg?.cancelled === true) return lostRace(c, usage);
  return recordAttempt(c, classify(c, failure), started, usage);
}

/** The call lost a race it was recorded for already: only tokens its upstream reported are added. */
function lostRace(c: TargetCall, usage: Usage | undefined): CallOutcome {
  if (usage !== undefined) c.log.addUsage(c.target.id, usage);
  return CANCELLED;
}

function classify(c: TargetCall, failure: Failure): Decision {
  return classifyFailure(failure, {
    aliasTarget: c.alias !== undefined,
    failOverOnContextLength: c.config.failOverOnContextLength,
    settings: c.target.settings,
    now: c.deps.now(),
  });
}

/**
 * Carries out a fail-over decision's bookkeeping and records the attempt: a
 * target that refused the request before any network call was skipped, not failed.
 */
function recordAttempt(c: TargetCall, d: Decision, started: number, usage?: Usage): CallOutcome {
  if (d.providerFailure) c.deps.health.reportFailure(c.provider.name, d.reason, c.target.settings);
  if (d.probeProvider) c.deps.probe(c.provider);
  if (d.coolDownUntil !== undefined) c.deps.health.coolDown(c.target.id, d.coolDownUntil, d.reason);
  c.log.add(c.target, d.reachedNetwork ? 'failed' : 'skipped', d.reason, c.deps.now() - started, { status: d.status, detail: withNote(d.detail, c), usage });
  return { kind: 'failed', decision: d };
}

/** An attempt's detail, with the note of the optional parameters its target got the request without. */
function withNote(detail: string | undefined, c: TargetCall): string | undefined {
  const note = c.trimmed?.note;
  if (note === undefined) return detail;
  return detail === undefined ? note : `${detail}; ${note}`;
}
