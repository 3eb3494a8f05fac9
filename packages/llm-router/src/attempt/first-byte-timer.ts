import { EventEmitter } from 'node:events';
import type { CancelSignal } from '../types.js';

/**
 * The first-byte timeout of one attempt, on a precise native timer.
 *
 * Why not undici's `headersTimeout`: undici runs it on "fast timers" that tick
 * about once a second, so a 200 ms `first_byte_timeout` fired after ~950 ms —
 * the hang a failover is meant to cut short was bounded by the timer wheel,
 * not by the config. One native `setTimeout` per attempt is precise to a few
 * milliseconds and cheap enough for the hot path.
 *
 * What "first byte" means:
 * - non-stream: the response headers (the adapter stops the clock there; the
 *   body's silences are then bounded by undici's body timeout);
 * - stream: the first content or tool-call delta, i.e. the moment the router
 *   commits to the target (the caller stops the clock there). Headers, a role
 *   chunk or keep-alive comments do not count: what a user waits for is the
 *   first token, and until the commit another target can still take over.
 *
 * The timer is itself the signal the upstream request listens to: undici
 * accepts an EventEmitter that emits `abort` and has `aborted` / `reason`
 * (documented `signal` type `AbortSignal | EventEmitter`). It follows the
 * caller's signal, and on expiry aborts with a `FirstByteTimeoutError` (code
 * `first_byte_timeout`), which undici rejects the request, or errors the
 * body, with.
 *
 * Lean on purpose — this runs for every attempt: on Node 20 a fresh
 * AbortController's signal costs ~4 µs to create and ~5 µs more for its first
 * listener, against well under 1 µs for an EventEmitter; the object is its own
 * listener on the caller's signal (`handleEvent`), and the timer callback is a
 * module function, so there are no closures.
 */
export class FirstByteTimer extends EventEmitter {
  /** Read by undici. */
  aborted = false;
  /** Read by undici: the error the request is aborted with. */
  reason: unknown = undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly caller: CancelSignal | undefined,
    readonly timeoutMs: number,
  ) {
    super();
    if (caller !== undefined) {
      if (caller.aborted) {
        this.abort(caller.reason);
        return;
      }
      caller.addEventListener('abort', this);
    }
    if (timeoutMs > 0) {
      this.timer = setTimeout(expire, timeoutMs, this);
      this.timer.unref();
    }
  }

  /** The caller aborted: pass it on (EventListenerObject protocol). */
  handleEvent(): void {
    this.abort(this.caller?.reason);
  }

  /** The first byte arrived: stop the clock (the caller's abort still reaches the request). */
  stop(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** The attempt is over: stop the clock and unhook from the caller's signal. */
  dispose(): void {
    this.stop();
    this.caller?.removeEventListener('abort', this);
  }

  /** @internal the timer ran out. */
  expire(): void {
    this.timer = undefined;
    this.abort(new FirstByteTimeoutError(this.timeoutMs));
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.stop();
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

function expire(timer: FirstByteTimer): void {
  timer.expire();
}

/** The abort reason when no first byte (stream: no first delta) arrived within `first_byte_timeout`. */
class FirstByteTimeoutError extends Error {
  override readonly name = 'FirstByteTimeoutError';
  readonly code = 'first_byte_timeout';

  constructor(timeoutMs: number) {
    super(`no first byte within ${timeoutMs} ms`);
  }
}
