import { errors, type Dispatcher } from 'undici';
import { decodeText } from './collect-body.js';
import { abortReason, type Signal, unwatchAbort, watchAbort } from './request-signal.js';

type IncomingHttpHeaders = Dispatcher.ResponseData['headers'];

/**
 * Buffered body bytes above which the upstream socket is paused until the
 * consumer catches up: undici's own body `Readable` high-water mark, so a slow
 * client holds at most about this much per stream (1,000 slow streams must not
 * buffer without bound).
 */
const HIGH_WATER_MARK = 64 * 1024; // 64 KiB

/** A stream response: status and headers, the body still arriving. */
export interface OpenedBody {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: BodyChunks;
}

/**
 * `dispatcher.request()` for a streamed answer, the body as a plain async
 * iterator over its chunks instead of a Node `Readable`.
 *
 * Why: a stream's chunks are small and many; each one went through a
 * `Readable` push, its buffer and its async iterator (a promise, an event and a
 * `read()` per chunk) before reaching the decoder. Here the dispatch handler
 * (undici 7's controller API) hands chunks straight to a waiting `next()`.
 *
 * Behaviour is kept identical to `request()` + its body `Readable`:
 * - errors before the headers reject the returned promise, unchanged (codes
 *   kept: connection refused/reset, socket closed before the response);
 * - `signal` aborts with its `reason` (a `first_byte_timeout` error from the
 *   attempt's timer, or the caller's reason), before the headers or after
 *   them, until the body has been read to its end or destroyed;
 * - an error after the headers (socket cut mid-stream, undici's body timeout,
 *   an abort) discards chunks not yet read and makes `next()` reject with it,
 *   as a destroyed `Readable` does;
 * - `destroy()` before the end aborts the request (the socket is closed, so
 *   the upstream stops generating); after the end it does nothing;
 * - backpressure: above `HIGH_WATER_MARK` buffered bytes the upstream socket is
 *   paused (`controller.pause()`) and resumed once the consumer has read below it.
 */
export function openBody(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: Signal | undefined,
): Promise<OpenedBody> {
  return new Promise<OpenedBody>((resolve, reject) => {
    dispatcher.dispatch(options, new BodyChunks(resolve, reject, signal));
  });
}

interface Waiter {
  resolve(step: IteratorResult<Uint8Array>): void;
  reject(error: unknown): void;
}

const DONE: IteratorResult<Uint8Array> = { done: true, value: undefined };

export class BodyChunks implements Dispatcher.DispatchHandler, AsyncIterableIterator<Uint8Array> {
  private controller: Dispatcher.DispatchController | undefined;
  private signal: Signal | undefined;
  /** Set once the request is aborted or failed; `next()` then rejects with it. */
  private error: unknown = undefined;
  private opening: { resolve(opened: OpenedBody): void; reject(error: unknown): void } | undefined;
  private queue: Buffer[] = [];
  private head = 0;
  private queued = 0;
  private waiter: Waiter | undefined;
  /** The upstream finished the body. */
  private complete = false;
  /** No more `next()` values: read to the end, destroyed or failed. */
  private closed = false;
  private readonly abortListener = (): void => this.abortFromSignal();

  constructor(resolve: (opened: OpenedBody) => void, reject: (error: unknown) => void, signal: Signal | undefined) {
    this.opening = { resolve, reject };
    if (signal === undefined) return;
    this.error = watchAbort(signal, this.abortListener);
    if (this.error === undefined) this.signal = signal;
  }

  // ── undici handler ──────────────────────────────────────────────────────────

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.error !== undefined) controller.abort(this.error as Error);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    const opening = this.opening;
    this.opening = undefined;
    opening?.resolve({ statusCode, headers, body: this });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.closed) return;
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter.resolve({ done: false, value: chunk });
      return;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued >= HIGH_WATER_MARK) controller.pause();
  }

  onResponseEnd(): void {
    this.complete = true;
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      this.close();
      waiter.resolve(DONE);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    const opening = this.opening;
    if (opening !== undefined) {
      this.opening = undefined;
      this.close();
      opening.reject(error);
      return;
    }
    this.fail(error);
  }

  // ── consumer ────────────────────────────────────────────────────────────────

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.head < this.queue.length) {
      const chunk = this.queue[this.head]!;
      this.queue[this.head++] = undefined as unknown as Buffer;
      this.queued -= chunk.length;
      if (this.head === this.queue.length) {
        this.queue = [];
        this.head = 0;
      }
      if (this.queued < HIGH_WATER_MARK && this.controller?.paused === true) this.controller.resume();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.error !== undefined) return Promise.reject(this.error);
    if (this.complete || this.closed) {
      this.close();
      return Promise.resolve(DONE);
    }
    return new Promise<IteratorResult<Uint8Array>>((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  /** Stop reading: before the end this aborts the upstream request (its socket is closed). */
  destroy(error?: Error): void {
    if (this.closed) return;
    if (this.complete && this.error === undefined) {
      this.close();
      return;
    }
    this.fail(error ?? new errors.RequestAbortedError());
  }

  async return(): Promise<IteratorResult<Uint8Array>> {
    this.destroy();
    return DONE;
  }

  /**
   * The (rest of the) body as text, as undici's `body.text()` (for error
   * answers), but at most `maxBytes` of it: past that the text is truncated
   * and the body destroyed, so an endless error body cannot fill memory.
   */
  async text(maxBytes: number): Promise<string> {
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const step = await this.next();
      if (step.done === true) return decodeText(chunks, length);
      const chunk = step.value as Buffer;
      if (length + chunk.length >= maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - length));
        this.destroy();
        return decodeText(chunks, maxBytes);
      }
      chunks.push(chunk);
      length += chunk.length;
    }
  }

  // ── internals ───────────────────────────────────────────────────────────────

  private abortFromSignal(): void {
    const signal = this.signal;
    this.signal = undefined; // a `once` listener: already removed
    const reason = abortReason(signal);
    if (this.opening !== undefined) {
      // Before the headers: abort now if the request has a socket, else as soon as it gets one.
      this.error = reason;
      this.controller?.abort(reason);
      return;
    }
    this.fail(reason);
  }

  /** Fails the body: unread chunks are dropped, a pending or later `next()` rejects. */
  private fail(error: unknown): void {
    if (this.error !== undefined || this.closed) return;
    this.error = error;
    this.queue = [];
    this.head = 0;
    this.queued = 0;
    this.close();
    if (!this.complete) this.controller?.abort(error as Error);
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter.reject(error);
    }
  }

  private close(): void {
    this.closed = true;
    const signal = this.signal;
    if (signal !== undefined) {
      this.signal = undefined;
      unwatchAbort(signal, this.abortListener);
    }
  }
}
