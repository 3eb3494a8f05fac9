import type { Adapter } from '../adapters/adapter.js';
import { resolveModel } from '../config/alias-registry.js';
import { abortedError, noAttempts, RouterError } from '../errors.js';
import type { HealthBlock, HealthCheck } from '../health/health-cache.js';
import { buildPlan } from '../plan/build-plan.js';
import type {
  AliasConfig,
  Attempt,
  ChatRequestBody,
  AttemptEvent,
  ConfigSnapshot,
  Operation,
  ProviderConfig,
  ProviderType,
  RouterRequest,
  RouterResult,
  Settings,
  TargetConfig,
} from '../types.js';
import { AttemptLog } from './attempt-log.js';
import { type BackgroundGate, type InFlight, sleep } from './background-gate.js';
import { callTarget, type CallOutcome } from './call-target.js';
import { Lease } from './lease.js';
import { operationOf, type OperationSpec } from './operation.js';
import { ContextFit } from '../context/context-fit.js';
import { answerChecks, type AnswerChecks } from './inspect-answer.js';

/** The part of HealthCache the attempt loop uses (reads the pre-check, reports outcomes). */
export interface AttemptHealth {
  /** `until`: when the target is usable again (the later of overlapping blocks); Retry-After is the soonest of these. */
  check(target: TargetConfig, provider: ProviderConfig | undefined): HealthCheck;
  reportSuccess(provider: string): void;
  reportFailure(provider: string, error: string, settings: Settings): void;
  coolDown(targetId: string, untilMs: number, reason: string): void;
}

/** Long-lived collaborators, owned by the router and shared by all requests. */
export interface ExecuteDeps {
  readonly health: AttemptHealth;
  readonly adapters: { get(type: ProviderType): Adapter | undefined };
  readonly now: () => number;
  readonly random: () => number;
  /** The next round_robin counter value of an alias (increments it). */
  readonly rotation: (alias: string) => number;
  readonly inFlight: InFlight;
  readonly gate: BackgroundGate;
  /** Checks a provider out of band now (joins a check already running); its result goes to the health cache. */
  readonly probe: (provider: ProviderConfig) => void;
  /** The attempt-event sink, or undefined when nobody listens (then no event objects are built). */
  readonly attemptListener: () => ((event: AttemptEvent) => void) | undefined;
}

/** First wait between retries of one target; doubles per retry, capped by retry_max_wait. */
const RETRY_BACKOFF_BASE_MS = 250; // 0.25 s

/**
 * One request: resolve → plan → for each target: health pre-check (skip without
 * a network call) → adapter call → classify → next. See call-target.ts for one
 * call and stream-commit.ts for when a stream becomes final.
 */
export async function execute(snapshot: ConfigSnapshot, request: RouterRequest, deps: ExecuteDeps): Promise<RouterResult> {
  const operation = operationOf(request);
  const { alias, config } = resolveModel(snapshot, request.model, operation.kind);
  if (request.signal?.aborted === true) throw abortedError({ outcome: noAttempts(alias) });
  if (config.kind !== operation.kind) throw kindMismatch(snapshot, config, operation.kind, alias);
  operation.admit(request, config, alias);
  // Before any upstream call: a schema that does not compile is the caller's mistake (invalid_schema).
  const answers = answerChecks(request, config, alias);
  const rotation = config.strategy === 'round_robin' ? deps.rotation(config.name) : 0;
  const plan = buildPlan(config, { random: deps.random, rotation, inFlight: deps.inFlight.get });
  const log = new AttemptLog(alias, request.requestId, deps.attemptListener());
  const background = request.priority === 'background';
  const lease = new Lease();
  if (background) {
    try {
      lease.hold(await deps.gate.acquire(snapshot.backgroundConcurrency, request.signal));
    } catch (error) {
      throw abortedError({ outcome: noAttempts(alias), cause: error });
    }
  }
  try {
    return await new AttemptRun(snapshot, request, operation, deps, alias, config, plan, log, background, lease, answers).run();
  } finally {
    // Unconditional: a committed stream took the slot over and frees it when it ends.
    lease.release();
  }
}

class AttemptRun {
  /** The first request parameter some target could not honour. */
  private unsupportedParam: string | undefined;
  /** Chat only: an embedding request has no messages to estimate (its inputs are checked upstream). */
  private readonly fit: ContextFit | undefined;

  constructor(
    private readonly snapshot: ConfigSnapshot,
    private readonly request: RouterRequest,
    private readonly operation: OperationSpec,
    private readonly deps: ExecuteDeps,
    private readonly alias: string | undefined,
    private readonly config: AliasConfig,
    private readonly plan: readonly TargetConfig[],
    private readonly log: AttemptLog,
    private readonly background: boolean,
    private readonly lease: Lease,
    private readonly answers: AnswerChecks,
  ) {
    this.fit = operation.kind === 'chat' ? new ContextFit(request.body as ChatRequestBody) : undefined;
  }

  async run(): Promise<RouterResult> {
    let ignoreHealth = false;
    let waited = false;
    for (;;) {
      let soonest: number | undefined;
      let coolingDown = false;
      let retriable = false; // some skip was for a transient reason (try_anyway may override it)
      for (const target of this.plan) {
        // A prompt that cannot fit is never sent, whatever the target's health (Ollama would cut it silently).
        const shortfall = this.fit?.check(target);
        if (shortfall !== undefined) {
          this.log.add(target, 'skipped', 'context_too_small', 0, {
            detail: `needs ~${shortfall.needed} tokens, context window ${shortfall.window}`,
          });
          continue;
        }
        const provider = this.snapshot.providers.get(target.provider);
        const adapter = provider === undefined ? undefined : this.deps.adapters.get(provider.type);
        // Before health: a target that cannot honour the request is no option whatever its state.
        const param = this.config.kind === 'chat' ? adapter?.unsupportedParameter(this.request.body as ChatRequestBody) : undefined;
        if (param !== undefined) {
          this.log.add(target, 'skipped', 'unsupported_parameter', 0, { detail: `${provider!.type} cannot honour \`${param}\`` });
          this.unsupportedParam ??= param;
          continue;
        }
        const check = this.deps.health.check(target, provider);
        if (!check.ok && !(ignoreHealth && isTransient(check.kind))) {
          this.log.add(target, 'skipped', check.reason, 0, {
            detail: check.until === undefined ? undefined : `until ${new Date(check.until).toISOString()}`,
          });
          if (check.until !== undefined && (soonest === undefined || check.until < soonest)) soonest = check.until;
          if (check.kind === 'cooling_down') coolingDown = true;
          if (isTransient(check.kind)) retriable = true;
          continue;
        }
        if (provider === undefined || adapter === undefined) {
          this.log.add(target, 'skipped', 'unconfigured: unknown provider', 0);
          continue;
        }
        const result = await this.tryTarget(target, provider, adapter);
        if (result !== undefined) return result;
      }
      if (this.log.attempts.length > 0 && this.log.attempts.every(isContextMiss)) throw this.contextLengthExceeded();
      if (this.log.attempts.some((a) => a.outcome === 'failed')) throw this.upstreamFailed();
      if (this.log.attempts.length > 0 && this.log.attempts.every(isRefusal)) throw this.unsupported();
      if (!ignoreHealth && retriable && this.config.onAllUnhealthy === 'try_anyway') {
        ignoreHealth = true;
        continue;
      }
      const now = this.deps.now();
      // A background request may wait out a rate-limit cooldown; a realtime one never waits.
      if (this.background && !waited && coolingDown && soonest !== undefined && soonest - now <= this.maxWait()) {
        waited = true;
        await this.wait(Math.max(0, soonest - now));
        continue;
      }
      throw this.noHealthyProvider(soonest, now);
    }
  }

  /** One target, with its configured retries. Undefined: failed, try the next target. */
  private async tryTarget(target: TargetConfig, provider: ProviderConfig, adapter: Adapter): Promise<RouterResult | undefined> {
    for (let n = 0; ; n++) {
      const outcome: CallOutcome = await callTarget({
        operation: this.operation,
        adapter,
        provider,
        target,
        request: this.request,
        alias: this.alias,
        config: this.config,
        deps: this.deps,
        log: this.log,
        requestLease: this.lease,
        answers: this.answers,
      });
      if (outcome.kind === 'result') return outcome.result;
      const d = outcome.decision;
      if (n >= target.settings.retries || !d.retryable) return undefined;
      const wait = this.retryWait(d.retryAfterMs, n, target.settings);
      if (wait === undefined) return undefined;
      await this.wait(wait);
    }
  }

  /** Backoff before retry n+1, or undefined when this request must not wait that long. */
  private retryWait(retryAfterMs: number | undefined, n: number, settings: Settings): number | undefined {
    const backoff = Math.min(RETRY_BACKOFF_BASE_MS * 2 ** n, settings.retryMaxWaitMs);
    if (retryAfterMs === undefined) return backoff;
    if (!this.background || retryAfterMs > settings.retryMaxWaitMs) return undefined; // fail over instead
    return Math.max(retryAfterMs, backoff);
  }

  private maxWait(): number {
    let max = 0;
    for (const t of this.plan) max = Math.max(max, t.settings.retryMaxWaitMs);
    return max;
  }

  private async wait(ms: number): Promise<void> {
    try {
      await sleep(ms, this.request.signal);
    } catch (error) {
      throw abortedError({ outcome: this.log.outcome(undefined), cause: error });
    }
  }

  private upstreamFailed(): RouterError {
    const outcome = this.log.outcome(undefined);
    return new RouterError('upstream_failed', `every target of ${this.config.name} failed: ${summarize(outcome.attempts)}`, { outcome });
  }

  /** Every target refused the request before any call: waiting or retrying cannot help, the request must change. */
  private unsupported(): RouterError {
    const outcome = this.log.outcome(undefined);
    const param = this.unsupportedParam;
    if (param !== undefined && outcome.attempts.some((a) => a.reason === 'unsupported_parameter')) {
      return new RouterError('unsupported_parameter', `no target of ${this.config.name} can honour \`${param}\`: ${summarize(outcome.attempts)}`, {
        outcome,
        param,
      });
    }
    return new RouterError('unsupported_request', `no target of ${this.config.name} can take this request: ${summarize(outcome.attempts)}`, {
      outcome,
    });
  }

  private contextLengthExceeded(): RouterError {
    const outcome = this.log.outcome(undefined);
    const estimate = this.fit === undefined ? '' : ` (~${this.fit.promptTokens()} prompt tokens estimated, plus the answer's budget)`;
    return new RouterError(
      'context_length_exceeded',
      `no target of ${this.config.name} has a context window for this request${estimate}: ` +
        outcome.attempts.map((a) => `${a.target}: ${a.detail ?? a.reason}`).join('; '),
      { outcome, param: 'messages' },
    );
  }

  private noHealthyProvider(soonest: number | undefined, now: number): RouterError {
    const outcome = this.log.outcome(undefined, { at: soonest, now });
    return new RouterError('no_healthy_provider', `no healthy target for ${this.config.name}: ${summarize(outcome.attempts)}`, { outcome });
  }
}

/** A skip because the target cannot take this request (not because of its health). */
function isRefusal(attempt: Attempt): boolean {
  return attempt.outcome === 'skipped' && (attempt.reason === 'unsupported_request' || attempt.reason === 'unsupported_parameter');
}

/** An alias on the wrong route: a chat alias asked for embeddings, or the reverse. */
function kindMismatch(snapshot: ConfigSnapshot, config: AliasConfig, wanted: Operation, alias: string | undefined): RouterError {
  const fitting = [...snapshot.aliases.values()].filter((a) => a.kind === wanted).map((a) => a.name);
  const route = config.kind === 'embedding' ? '/v1/embeddings' : '/v1/chat/completions';
  return new RouterError(
    'alias_kind_mismatch',
    `${config.name} is ${config.kind === 'embedding' ? 'an embedding' : 'a chat'} alias: use it on ${route}` +
      ` (${wanted} aliases: ${fitting.length === 0 ? 'none configured' : fitting.join(', ')})`,
    { knownAliases: fitting, outcome: noAttempts(alias), param: 'model' },
  );
}

/** The target cannot hold the request: skipped by the estimate, or the upstream said so. */
function isContextMiss(attempt: Attempt): boolean {
  return attempt.reason === 'context_too_small' || attempt.reason === 'context_length';
}

/** Skips that `try_anyway` may override: a target without a key or adapter cannot work at all. */
function isTransient(kind: HealthBlock): boolean {
  return kind !== 'unconfigured';
}

/** `groq/x: skipped: unhealthy; ollama/y: 503 Service Unavailable` — target ids and reasons only, no secrets. */
function summarize(attempts: readonly { target: string; outcome: string; reason: string; detail?: string }[]): string {
  return attempts
    .map((a) => `${a.target}: ${a.outcome === 'skipped' ? `skipped: ${a.reason}` : (a.detail ?? a.reason)}`)
    .join('; ');
}
