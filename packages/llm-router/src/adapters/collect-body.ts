import type { EventEmitter } from 'node:events';
import { errors, type Dispatcher } from 'undici';

type IncomingHttpHeaders = Dispatcher.ResponseData['headers'];

/** A whole (non-stream) upstream answer. */
export interface CollectedResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** The body decoded as UTF-8 (a leading BOM skipped, as undici's `body.text()` does). */
  readonly text: string;
}

/**
 * `dispatcher.request()` + `await res.body.text()`, without the body Readable.
 *
 * Why: for a non-stream answer the router wants the whole body as one string.
 * `request()` builds a Node `Readable` per response, pushes every chunk through
 * it and `text()` collects them back out again — measurable on the hot path
 * (the bench's sequential loop spends tens of µs there). A dispatch handler
 * (undici 7's controller API) gets the chunks directly and resolves once.
 *
 * Behaviour is kept identical to `request()`:
 * - the same errors reject the promise (connection refused/reset, socket closed
 *   before or during the response, undici's body timeout), codes untouched;
 * - `signal` (an AbortSignal, or an EventEmitter with `aborted` / `reason` such
 *   as the attempt's `FirstByteTimer`) aborts with its `reason`, before the
 *   headers as after them; aborted before a socket is assigned, the request
 *   aborts as soon as it gets one (undici calls `onRequestStart` then);
 * - 1xx informational heads are skipped;
 * - `firstByte.stop()` runs when the final response head arrives (the
 *   attempt's first-byte clock stops there, see `adapter.ts`).
 */
export function collectBody(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal | EventEmitter | undefined,
  firstByte: { stop(): void } | undefined,
): Promise<CollectedResponse> {
  return new Promise<CollectedResponse>((resolve, reject) => {
    dispatcher.dispatch(options, new BodyCollector(resolve, reject, signal, firstByte));
  });
}

/** What undici accepts as a request `signal`. */
export type Signal = AbortSignal | EventEmitter;

class BodyCollector implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private reason: Error | undefined;
  private signal: Signal | undefined;
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private length = 0;
  private settled = false;
  private readonly abortListener = (): void => this.abort();

  constructor(
    private readonly resolve: (response: CollectedResponse) => void,
    private readonly reject: (error: unknown) => void,
    signal: Signal | undefined,
    private readonly firstByte: { stop(): void } | undefined,
  ) {
    if (signal === undefined) return;
    if ((signal as { aborted?: boolean }).aborted === true) {
      this.reason = abortReason(signal);
      return;
    }
    this.signal = signal;
    listen(signal, this.abortListener);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.reason !== undefined) controller.abort(this.reason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
    this.firstByte?.stop();
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    this.unlisten();
    this.resolve({ statusCode: this.statusCode, headers: this.headers, text: decodeText(this.chunks, this.length) });
    this.chunks = [];
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.unlisten();
    this.chunks = [];
    this.reject(error);
  }

  private abort(): void {
    const signal = this.signal;
    this.signal = undefined; // a `once` listener: already removed
    this.reason = abortReason(signal);
    this.controller?.abort(this.reason);
  }

  private unlisten(): void {
    const signal = this.signal;
    if (signal === undefined) return;
    this.signal = undefined;
    unlisten(signal, this.abortListener);
  }
}

/** Listens once for `abort` (an AbortSignal, or an EventEmitter as undici allows). */
export function listen(signal: Signal, listener: () => void): void {
  if ('addEventListener' in signal) signal.addEventListener('abort', listener, { once: true });
  else signal.once('abort', listener);
}

export function unlisten(signal: Signal, listener: () => void): void {
  if ('removeEventListener' in signal) signal.removeEventListener('abort', listener);
  else signal.removeListener('abort', listener);
}

/** The error an aborted request fails with: the signal's reason, as undici's `request()` does. */
export function abortReason(signal: Signal | undefined): Error {
  const reason = (signal as { reason?: unknown } | undefined)?.reason;
  return (reason ?? new errors.RequestAbortedError()) as Error;
}

/** undici's `chunksDecode`: concatenate, skip a UTF-8 BOM, decode. */
export function decodeText(chunks: Buffer[], length: number): string {
  if (chunks.length === 0 || length === 0) return '';
  const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  const start = buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start, buffer.length);
}
