/** Addition: a cloud account's request quota, as a fake upstream enforces it (FakeUpstreamOptions.quota). */
export interface FakeQuota {
  /** Requests accepted in any window of `windowMs`; past it, a request is answered 429. */
  requests: number;
  /** Default 60 000 (per minute, like a provider's RPM). */
  windowMs?: number;
}

const MINUTE_MS = 60_000;

/**
 * A sliding window over accepted requests: at most `requests` in any span of
 * `windowMs`, which is the strictest reading of "N per minute" a provider can
 * apply. A refused request does not count against the window (it was not served).
 */
export class QuotaWindow {
  readonly #limit: number;
  readonly #windowMs: number;
  /** Times of accepted requests, oldest first; never more than `limit` of them. */
  #accepted: number[] = [];
  #refusals = 0;

  constructor(quota: FakeQuota) {
    if (!Number.isInteger(quota.requests) || quota.requests < 1) throw new TypeError(`quota.requests must be a whole number ≥ 1, got ${quota.requests}`);
    this.#limit = quota.requests;
    this.#windowMs = quota.windowMs ?? MINUTE_MS;
  }

  /** Accepts a request at `now`, or returns the seconds until the oldest accepted one leaves the window (its Retry-After). */
  admit(now: number): { readonly ok: true } | { readonly ok: false; readonly retryAfterS: number } {
    const since = now - this.#windowMs;
    while (this.#accepted.length > 0 && this.#accepted[0]! <= since) this.#accepted.shift();
    if (this.#accepted.length < this.#limit) {
      this.#accepted.push(now);
      return { ok: true };
    }
    this.#refusals++;
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((this.#accepted[0]! + this.#windowMs - now) / 1000)) };
  }

  /** Requests answered 429 because the quota was used up. */
  get refusals(): number {
    return this.#refusals;
  }

  reset(): void {
    this.#accepted = [];
    this.#refusals = 0;
  }
}
