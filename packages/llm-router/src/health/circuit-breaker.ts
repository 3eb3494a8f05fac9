/**
 * A per-provider circuit breaker (after cockatiel's ConsecutiveBreaker):
 *
 *   closed ──(failureThreshold consecutive failures)──► open
 *   open ──(unhealthyPeriodMs elapse)──► half_open       (a time-based, lazy transition)
 *   half_open ──(one success)──► closed
 *   half_open ──(one failure)──► open again at once, for another period
 *   open/half_open ──(one success)──► closed              (e.g. an on_all_unhealthy: try_anyway call)
 *
 * While open the provider is skipped without a network call; that is what turns
 * a 75 s hang on a dead GPU box into a millisecond failover. Half-open lets the
 * next probe (or request) find out whether it came back. Time is injected.
 */
export const BreakerState = {
  /** Healthy: calls go through; failures are counted. */
  Closed: 'closed',
  /** Unhealthy: skipped until `openUntil`. */
  Open: 'open',
  /** The unhealthy period is over: may be tried again; one failure reopens it. */
  HalfOpen: 'half_open',
} as const;

export type BreakerState = (typeof BreakerState)[keyof typeof BreakerState];

export interface BreakerPolicy {
  readonly failureThreshold: number;
  readonly unhealthyPeriodMs: number;
}

export interface BreakerSnapshot {
  readonly state: BreakerState;
  readonly consecutiveFailures: number;
  /** When an open breaker lets calls through again (set while open or half-open). */
  readonly openUntil: number | undefined;
  readonly lastError: string | undefined;
  /** Time of the last recorded success or failure. */
  readonly lastCheck: number | undefined;
}

/** Whether a call changed the breaker between healthy (closed) and unhealthy. */
export type Flip = 'became_healthy' | 'became_unhealthy' | undefined;

export class CircuitBreaker {
  private consecutiveFailures = 0;
  private openUntil: number | undefined;
  private lastError: string | undefined;
  private lastCheck: number | undefined;

  constructor(private readonly now: () => number) {}

  get state(): BreakerState {
    if (this.openUntil === undefined) return BreakerState.Closed;
    return this.now() < this.openUntil ? BreakerState.Open : BreakerState.HalfOpen;
  }

  success(): Flip {
    const wasHealthy = this.openUntil === undefined;
    this.consecutiveFailures = 0;
    this.openUntil = undefined;
    this.lastCheck = this.now();
    return wasHealthy ? undefined : 'became_healthy';
  }

  failure(error: string, policy: BreakerPolicy): Flip {
    const state = this.state;
    const now = this.now();
    this.consecutiveFailures += 1;
    this.lastError = error;
    this.lastCheck = now;
    if (state === BreakerState.HalfOpen) {
      // The trial call failed: the provider is still down, skip it for another full period.
      this.openUntil = now + policy.unhealthyPeriodMs;
      return undefined; // already counted as unhealthy
    }
    if (state === BreakerState.Closed && this.consecutiveFailures >= Math.max(1, policy.failureThreshold)) {
      this.openUntil = now + policy.unhealthyPeriodMs;
      return 'became_unhealthy';
    }
    // Open: late failures (e.g. try_anyway calls) are counted but do not extend the period.
    return undefined;
  }

  /**
   * Another replica opened this provider's breaker until `until`: skip it
   * here too. A later end already known is kept; a period already over is
   * not worth applying (it would only make the provider half-open); nor is a
   * failure older than a success seen here.
   */
  openUntilRemote(until: number, error: string, at: number): boolean {
    if (until <= this.now() || (this.openUntil !== undefined && this.openUntil >= until)) return false;
    // Closed by a success here after the failure over there: this replica knows better (newer).
    if (this.openUntil === undefined && this.consecutiveFailures === 0 && this.lastCheck !== undefined && this.lastCheck > at) return false;
    this.openUntil = until;
    this.consecutiveFailures = Math.max(1, this.consecutiveFailures);
    this.lastError = error;
    this.lastCheck = Math.max(this.lastCheck ?? 0, at);
    return true;
  }

  /**
   * Another replica saw this provider healthy at `at`. Ignored when this
   * replica's own last record is newer (it saw a failure after that success).
   */
  closeRemote(at: number): boolean {
    if (this.openUntil === undefined || (this.lastCheck !== undefined && this.lastCheck > at)) return false;
    this.consecutiveFailures = 0;
    this.openUntil = undefined;
    this.lastCheck = at;
    return true;
  }

  snapshot(): BreakerSnapshot {
    return {
      state: this.state,
      consecutiveFailures: this.consecutiveFailures,
      openUntil: this.openUntil,
      lastError: this.lastError,
      lastCheck: this.lastCheck,
    };
  }
}
