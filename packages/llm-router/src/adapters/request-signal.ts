import type { EventEmitter } from 'node:events';
import { errors } from 'undici';

/**
 * What undici accepts as a request `signal`: an AbortSignal, or an EventEmitter
 * with `aborted` / `reason` (such as the attempt's `FirstByteTimer`). Shared by
 * the two dispatch handlers, `collect-body.ts` and `body-chunks.ts`.
 */
export type Signal = AbortSignal | EventEmitter;

/**
 * Listens once for `abort`; if the signal has already aborted, does not listen
 * and returns the error the request must fail with instead.
 */
export function watchAbort(signal: Signal, listener: () => void): Error | undefined {
  if ((signal as { aborted?: boolean }).aborted === true) return abortReason(signal);
  if ('addEventListener' in signal) signal.addEventListener('abort', listener, { once: true });
  else signal.once('abort', listener);
  return undefined;
}

export function unwatchAbort(signal: Signal, listener: () => void): void {
  if ('removeEventListener' in signal) signal.removeEventListener('abort', listener);
  else signal.removeListener('abort', listener);
}

/** The error an aborted request fails with: the signal's reason, as undici's `request()` does. */
export function abortReason(signal: Signal | undefined): Error {
  const reason = (signal as { reason?: unknown } | undefined)?.reason;
  return (reason ?? new errors.RequestAbortedError()) as Error;
}
