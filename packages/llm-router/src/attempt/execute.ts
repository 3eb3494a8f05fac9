import type { Adapter } from '../adapters/adapter.js';
import { resolveModel } from '../config/alias-registry.js';
import { abortedError, noAttempts } from '../errors.js';
import { buildPlan } from '../plan.js';
import type { AliasConfig, ChatRequestBody, ConfigSnapshot, ProviderConfig, RouterRequest, RouterResult, Settings, TargetConfig } from '../types.js';
import type { AttemptReason } from './attempt-reasons.js';
import { AttemptLog } from './attempt-log.js';
import type { Refund } from '../load/rate-window.js';
import { RequestCost } from '../load/request-cost.js';
import { sleep } from './background-gate.js';
import { callTarget, type CallOutcome } from './call-target.js';
import type { ExecuteDeps } from './execute-deps.js';
import { kindMismatch } from './kind-mismatch.js';
import { finalError } from './final-error.js';
import { firstAnswer, type HedgeLeg, HedgeRace, settledWithin } from './hedge-race.js';
import { Lease } from './lease.js';
import { nextStep } from './next-step.js';
import { operationOf, type OperationSpec } from './operation.js';
import { PassTally, type PassKind, type PassSummary } from './pass-summary.js';
import { ContextFit } from '../context/context-fit.js';
import type { TargetParameters } from './target-parameters.js';
import { precheck, type Precheck, type PrecheckInputs, type Ready } from './precheck.js';
import { answerChecks, type AnswerChecks } from './inspect-answer.js';

/** First wait between retries of one target; doubles per retry, capped by retry_max_wait. */
const RETRY_BACKOFF_BASE_MS = 250; // 0.25 s

/**
 * One request: resolve → plan → for each target: health pre-check (skip without
 * a network call) → adapter call → classify → next; when no target answered,
 * next-step.ts decides what follows. See call-target.ts for one call and
 * stream-commit.ts for when a stream becomes final.
 */
export async function execute(snapshot: ConfigSnapshot, request: RouterRequest, deps: ExecuteDeps): Promise<RouterResult> {
  const operation = operationOf(request);
  const { alias, config } = resolveModel(snapshot, request.model, operation.kind);
  if (request.signal?.aborted === true) throw abortedError({ outcome: noAttempts(alias) });
  if (config.kind !== operation.kind) throw kindMismatch(snapshot, config, operation.kind, alias);
  operation.admit(request, config, alias);
  // Before any upstream call: a schema that does not compile is the caller's mistake (invalid_schema).
  const checks = await answerChecks(request, config, alias, deps.schemas);
  const rotation = config.strategy === 'round_robin' ? deps.rotation(config.name) : 0;
  const plan = buildPlan(config, { random: deps.random, rotation, inFlight: deps.inFlight.get });
  const log = new AttemptLog(alias, request.requestId, deps.attemptListener(), request.observer);
  const lease = new Lease();
  if (request.priority === 'background') {
    try {
      lease.hold(await deps.gate.acquire(snapshot.backgroundConcurrency, request.signal));
    } catch (error) {
      throw abortedError({ outcome: noAttempts(alias), cause: error });
    }
  }
  try {
    return await new AttemptRun({ snapshot, request, operation, deps, alias, config, plan, log, lease, answerChecks: checks }).run();
  } finally {
    // Unconditional: a committed stream took the slot over and frees it when it ends.
    lease.release();
  }
}

/** Everything the attempts of one request share, worked out before the first of them. */
interface RunInputs {
  readonly snapshot: ConfigSnapshot;
  readonly request: RouterRequest;
  readonly operation: OperationSpec;
  readonly deps: ExecuteDeps;
  readonly alias: string | undefined;
  readonly config: AliasConfig;
  readonly plan: readonly TargetConfig[];
  readonly log: AttemptLog;
  /** What the request holds (its background slot): a committed stream takes it over. */
  readonly lease: Lease;
  readonly answerChecks: AnswerChecks;
}

/** One walk over the plan: a target answered, or what the walk saw. */
type Pass = { readonly kind: 'answered'; readonly result: RouterResult } | { readonly kind: 'exhausted'; readonly summary: PassSummary };

/** The attempts of one request: walk the plan and, while no target answers, take the step next-step.ts decides. */
class AttemptRun {
  private readonly background: boolean;
  /** Chat only: an embedding request has no messages to estimate (its inputs are checked upstream). */
  private readonly fit: ContextFit | undefined;
  /** The longest a background request waits for a cooldown to end: the plan's largest `retry_max_wait`. */
  private readonly maxWaitMs: number;
  /** What this request charges to a rate window: made on first use, so a plan without `rpm` / `tpm` never builds it. */
  private charges: RequestCost | undefined;
  /** A hedge was started (at most one per request). */
  private hedged = false;
  /** Plan indexes of the targets passed by because they were full: a `for_room` walk visits only these. */
  private readonly passedFull = new Set<number>();
  /** What the pre-call checks read, gathered once per request (they run once per target and walk). */
  private readonly precheckInputs: PrecheckInputs;

  constructor(private readonly r: RunInputs) {
    this.background = r.request.priority === 'background';
    this.fit = r.operation.kind === 'chat' ? new ContextFit(r.request.body as ChatRequestBody) : undefined;
    this.precheckInputs = { snapshot: r.snapshot, request: r.request, config: r.config, deps: r.deps, fit: this.fit };
    let max = 0;
    for (const t of r.plan) max = Math.max(max, t.settings.retryMaxWaitMs);
    this.maxWaitMs = max;
  }

  run(): Promise<RouterResult> {
    return this.walkFrom('first', []);
  }

  /** Walks the plan, then carries out the next step; next-step.ts takes each extra walk at most once. */
  private async walkFrom(kind: PassKind, before: readonly PassSummary[]): Promise<RouterResult> {
    const pass = await this.walk(kind);
    if (pass.kind === 'answered') return pass.result;
    const passes = [...before, pass.summary];
    const now = this.r.deps.now();
    const step = nextStep(passes, { onAllUnhealthy: this.r.config.onAllUnhealthy, background: this.background, maxWaitMs: this.maxWaitMs, now });
    switch (step.kind) {
      case 'retry_ignoring_health':
        return this.walkFrom('ignoring_health', passes);
      case 'wait_for_room':
        return this.walkFrom('for_room', passes);
      case 'wait':
        await this.wait(step.ms);
        return this.walkFrom('after_wait', passes);
      case 'fail':
        throw finalError(step, { name: this.r.config.name, log: this.r.log, fit: this.fit, now });
    }
  }

  /** Each target in plan order until one answers; on an `ignoring_health` walk, blocks that pass with time skip nothing. */
  private async walk(kind: PassKind): Promise<Pass> {
    const { log } = this.r;
    const tally = new PassTally(kind);
    const plan = this.r.plan;
    // The target a hedge was started on: the walk does not call it again.
    let hedgedIndex = -1;
    for (let index = 0; index < plan.length; index++) {
      if (index === hedgedIndex) continue;
      if (kind === 'for_room' && !this.passedFull.has(index)) continue;
      const target = plan[index]!;
      const ready = this.precheck(target, kind);
      if (ready.kind === 'skip') {
        log.add(target, 'skipped', ready.reason, 0, ready.detail === undefined ? undefined : { detail: ready.detail });
        ready.count(tally);
        continue;
      }
      const race = this.hedgeRace(target, index);
      const run = this.runTarget(target, ready, index, kind, tally, race?.primary);
      // Without `hedge_after` (the default) nothing more than this: no timer, no race object.
      const outcome = race === undefined ? { result: await run, hedgedIndex: -1 } : await this.race(race, run, target.settings.hedgeAfterMs, index, kind, tally);
      if (outcome.result !== undefined) return { kind: 'answered', result: outcome.result };
      if (outcome.hedgedIndex !== -1) hedgedIndex = outcome.hedgedIndex;
    }
    return { kind: 'exhausted', summary: tally.done() };
  }

  /** A target's room (when it declares a capacity: `max_concurrency`, `rpm`, `tpm`) and its call with retries; undefined: it did not answer. */
  private async runTarget(
    target: TargetConfig,
    ready: Ready,
    index: number,
    kind: PassKind,
    tally: PassTally,
    leg: HedgeLeg | undefined,
  ): Promise<RouterResult | undefined> {
    let slot: Lease | undefined;
    if (target.concurrency !== undefined || target.rates !== undefined) {
      slot = await this.admit(target, index, kind, leg);
      if (slot === undefined) {
        if (leg?.cancelled !== true) {
          tally.full();
          this.passedFull.add(index);
        }
        return undefined;
      }
    }
    try {
      return await this.tryTarget(target, ready.provider, ready.adapter, tally, ready.parameters, slot, leg);
    } finally {
      // A committed stream took the slot over and frees it when it ends.
      slot?.release();
    }
  }

  /**
   * A race for the attempt on `target`, when `hedge_after` is in force for it:
   * set (above 0) in its settings, no hedge yet in this request, a later target
   * in the plan, and a realtime request (background: only with the alias's
   * `hedge_background`). Undefined otherwise.
   */
  private hedgeRace(target: TargetConfig, index: number): HedgeRace | undefined {
    if (target.settings.hedgeAfterMs <= 0 || this.hedged || index >= this.r.plan.length - 1) return undefined;
    if (this.background && !this.r.config.hedgeBackground) return undefined;
    return new HedgeRace(this.r.log, this.r.deps.now, this.r.request.signal);
  }

  /**
   * Waits `delayMs` for the attempt in flight (`primary`) to answer; past that,
   * calls the first later target of the plan that can be called at once (not
   * skipped, room now: a hedge never queues) as well, and takes the first
   * answer of the two (the calls claim the race, hedge-race.ts). When one of
   * them fails the other goes on alone; when both do the walk goes on.
   */
  private async race(
    race: HedgeRace,
    primary: Promise<RouterResult | undefined>,
    delayMs: number,
    index: number,
    kind: PassKind,
    tally: PassTally,
  ): Promise<{ readonly result: RouterResult | undefined; readonly hedgedIndex: number }> {
    const first = await settledWithin(primary, delayMs);
    if (first.settled) return { result: first.value, hedgedIndex: -1 };
    if (race.decided) return { result: await primary, hedgedIndex: -1 };
    const plan = this.r.plan;
    for (let j = index + 1; j < plan.length; j++) {
      const target = plan[j]!;
      const ready = this.precheck(target, kind);
      if (ready.kind === 'skip') continue;
      // Room now, so admit() takes it at once (it runs synchronously up to its first await).
      if (!this.hasRoom(target)) continue;
      this.hedged = true;
      const hedge = this.runTarget(target, ready, j, kind, tally, race.startHedge());
      return { result: await firstAnswer(primary, hedge), hedgedIndex: j };
    }
    race.unavailable();
    return { result: await primary, hedgedIndex: -1 };
  }

  /** The pre-call checks (precheck.ts), the same rule count_tokens picks its target by. */
  private precheck(target: TargetConfig, kind: PassKind): Precheck {
    return precheck(this.precheckInputs, target, kind);
  }

  /**
   * Room at a target that declares a capacity: a `max_concurrency` slot, and
   * a charge to each of its `rpm` / `tpm` windows. Undefined when the request
   * moves on (the skip is logged: `saturated` with in-flight/limit, or
   * `rate_limited` with the window's use/limit). A full target is passed by
   * the same way whatever filled it. Realtime: waits `queue_timeout` (default
   * 0) when a later target of the plan is usable now, else up to
   * `first_byte_timeout` (a busy or rate-bound target alone never fails a
   * request). Background: moves on at once only to a free target without a
   * price, else waits up to `background_queue_timeout` (it keeps a busy local
   * box fed rather than spend cloud quota). When what followed a full target
   * failed too, the `for_room` walk comes back and waits for it as if it were
   * alone (next-step.ts). Waiters are served in arrival order. The slot is the lease returned; rate charges stand once the call is
   * made (the upstream counts a request it was sent), and are given back only
   * when the request never leaves.
   */
  private async admit(target: TargetConfig, index: number, kind: PassKind, leg: HedgeLeg | undefined): Promise<Lease | undefined> {
    const { deps, request, log } = this.r;
    const started = deps.now();
    const settings = target.settings;
    let timeoutMs = 0;
    if (!this.hasRoom(target)) {
      // Back for its room after what followed it failed: wait as if it were the only target.
      if (kind === 'for_room') timeoutMs = this.background ? settings.backgroundQueueTimeoutMs : settings.firstByteTimeoutMs;
      else if (this.background) timeoutMs = this.usableLater(index, kind, true) ? 0 : settings.backgroundQueueTimeoutMs;
      else timeoutMs = this.usableLater(index, kind, false) ? settings.queueTimeoutMs : settings.firstByteTimeoutMs;
    }
    const slot = new Lease();
    const refunds: Refund[] = [];
    const giveBack = (): void => {
      slot.release();
      for (const refund of refunds) refund();
    };
    const skipped = (reason: AttemptReason, state: string): undefined => {
      giveBack();
      const waited = deps.now() - started;
      log.add(target, 'skipped', reason, waited, { detail: `${state}${waited > 0 ? `; waited ${waited} ms` : ''}` });
      return undefined;
    };
    try {
      const limit = target.concurrency;
      if (limit !== undefined) {
        const state = deps.concurrency.state(limit);
        const release = await deps.concurrency.acquire(limit, timeoutMs, leg ?? request.signal);
        if (release === undefined) {
          return skipped('saturated', `in flight ${state.inFlight}/${state.limit} (${limit.kind} ${limit.name}), ${state.queued} queued`);
        }
        slot.hold(release);
      }
      for (const rate of target.rates ?? []) {
        const cost = this.cost.of(rate, target);
        const state = deps.rates.state(rate);
        const left = Math.max(0, timeoutMs - (deps.now() - started));
        const refund = await deps.rates.acquire(rate, cost, left, leg ?? request.signal);
        if (refund === undefined) {
          const needs = rate.unit === 'tpm' ? `, needs ${cost}` : '';
          return skipped('rate_limited', `${rate.unit} ${state.used}/${state.limit}${needs} (${rate.kind} ${rate.name}), ${state.queued} queued`);
        }
        refunds.push(refund);
      }
    } catch (error) {
      giveBack();
      // The hedge this attempt raced answered while it waited for room: it leaves the line, nothing to record.
      if (leg?.cancelled === true) return undefined;
      throw abortedError({ outcome: log.outcome(undefined), cause: error });
    }
    return slot;
  }

  private get cost(): RequestCost {
    return (this.charges ??= new RequestCost(this.r.operation.kind, this.r.request.body, this.fit));
  }

  /** Whether `target` would admit this request at once: a free slot, and room in each of its rate windows. */
  private hasRoom(target: TargetConfig): boolean {
    const { concurrency, rates } = this.r.deps;
    if (target.concurrency !== undefined && !concurrency.hasRoom(target.concurrency)) return false;
    for (const rate of target.rates ?? []) if (!rates.hasRoom(rate, this.cost.of(rate, target))) return false;
    return true;
  }

  /** Whether a target after `index` could be called at once (background: only one without a price). */
  private usableLater(index: number, kind: PassKind, freeOnly: boolean): boolean {
    const plan = this.r.plan;
    for (let j = index + 1; j < plan.length; j++) {
      const next = plan[j]!;
      if (freeOnly && next.price !== undefined) continue;
      if (this.precheck(next, kind).kind !== 'ready') continue;
      if (this.hasRoom(next)) return true;
    }
    return false;
  }

  /** One target, with its configured retries. Undefined: failed (counted in `tally`), try the next target. */
  private async tryTarget(
    target: TargetConfig,
    provider: ProviderConfig,
    adapter: Adapter,
    tally: PassTally,
    parameters: Exclude<TargetParameters, { kind: 'refused' }>,
    slot: Lease | undefined,
    leg: HedgeLeg | undefined,
  ): Promise<RouterResult | undefined> {
    const { operation, request, alias, config, deps, log, lease, answerChecks } = this.r;
    const trimmed = parameters.kind === 'trimmed' ? parameters : undefined;
    for (let n = 0; ; n++) {
      // Lost the race while waiting (for room, or between retries): no call.
      if (leg?.cancelled === true) return undefined;
      // A retry is charged after its wait, once it is sure to be made.
      if (n > 0 && !this.chargeRetry(target)) return undefined;
      const outcome: CallOutcome = await callTarget({
        operation,
        adapter,
        provider,
        target,
        request,
        trimmed,
        alias,
        config,
        deps,
        log,
        requestLease: lease,
        slot,
        answerChecks,
        leg,
      });
      if (outcome.kind === 'result') return outcome.result;
      if (outcome.kind === 'cancelled') return undefined;
      const d = outcome.decision;
      tally.callFailed(d);
      if (n >= target.settings.retries || !d.retryable) return undefined;
      const wait = this.retryWait(d.retryAfterMs, n, target.settings);
      if (wait === undefined) return undefined;
      await this.wait(wait, leg);
    }
  }

  /** A retry is one more request the upstream counts: charged to the target's rate windows, or none when one is used up (fail over instead). */
  private chargeRetry(target: TargetConfig): boolean {
    if (target.rates === undefined) return true;
    const refunds: Refund[] = [];
    for (const rate of target.rates) {
      const refund = this.r.deps.rates.tryCharge(rate, this.cost.of(rate, target));
      if (refund === undefined) {
        for (const r of refunds) r();
        return false;
      }
      refunds.push(refund);
    }
    return true;
  }

  /** Backoff before retry n+1, or undefined when this request must not wait that long. */
  private retryWait(retryAfterMs: number | undefined, n: number, settings: Settings): number | undefined {
    const backoff = Math.min(RETRY_BACKOFF_BASE_MS * 2 ** n, settings.retryMaxWaitMs);
    if (retryAfterMs === undefined) return backoff;
    if (!this.background || retryAfterMs > settings.retryMaxWaitMs) return undefined; // fail over instead
    return Math.max(retryAfterMs, backoff);
  }

  /** Waits `ms`; an abort of the request throws `aborted`, the loss of the race `leg` runs in only ends the wait. */
  private async wait(ms: number, leg?: HedgeLeg): Promise<void> {
    try {
      await sleep(ms, leg ?? this.r.request.signal);
    } catch (error) {
      if (leg?.cancelled === true) return;
      throw abortedError({ outcome: this.r.log.outcome(undefined), cause: error });
    }
  }
}
