/**
 * The "client went away" signal of one request, handed to the router as its
 * `CancelSignal` (the router's contract for a caller's signal: `aborted`,
 * `reason`, `add/removeEventListener('abort')` with functions or listener
 * objects). It is not an `AbortSignal` and does not pose as one, so the
 * compiler would catch any attempt to give it to `fetch`, `AbortSignal.any` or
 * a Node API that needs the real thing.
 *
 * Why not an AbortController: it runs for every request, and on Node 20 a
 * controller's signal plus its first EventTarget listener (the router's
 * first-byte timer hooks one per attempt) cost ~10–15 µs, a visible share of
 * the gateway's added latency. This object implements `CancelSignal` (plus
 * `throwIfAborted()`) with a plain array of listeners, and is itself the
 * `close` listener of the response.
 *
 * It fires once: when the response closes before it finished (socket closed
 * at any point: before, during or after the upstream call). Listeners are
 * called once and dropped, so `{ once: true }` holds without bookkeeping.
 */
import type { ServerResponse } from 'node:http';
import type { CancelListener, CancelSignal } from '@mana/llm-router';

class ClientAbortError extends Error {
  override readonly name = 'AbortError';
  readonly code = 'ABORT_ERR';
  constructor() {
    super('The client closed the connection.');
  }
}

export class ClientAbort implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: CancelListener[] | undefined = undefined;

  constructor(private readonly res: ServerResponse) {
    res.once('close', this.onClose);
  }

  /** `options.once` needs no handling: every listener is called at most once. */
  addEventListener(type: string, listener: CancelListener | null, _options?: { once?: boolean }): void {
    if (type !== 'abort' || listener === null || this.aborted) return;
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(type: string, listener: CancelListener | null): void {
    if (type !== 'abort' || this.listeners === undefined || listener === null) return;
    const i = this.listeners.indexOf(listener);
    if (i !== -1) this.listeners.splice(i, 1);
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  abort(reason: unknown = new ClientAbortError()): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners === undefined) return;
    const event = { type: 'abort', target: this } as unknown as Event;
    for (const l of listeners) {
      if (typeof l === 'function') l(event);
      else l.handleEvent(event);
    }
  }

  private readonly onClose = (): void => {
    if (!this.res.writableFinished) this.abort();
  };
}
