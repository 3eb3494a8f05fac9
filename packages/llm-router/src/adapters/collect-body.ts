import type { Dispatcher } from 'undici';
import { ResponseTooLargeError } from './adapter.js';
import { abortReason, type Signal, unwatchAbort, watchAbort } from './request-signal.js';

type IncomingHttpHeaders = Dispatcher.ResponseData['headers'];

/** How much of an upstream body is held in memory (from the target's settings). */
export interface BodyLimits {
  /** A 2xx body over this fails the call with `ResponseTooLargeError` (`max_response_bytes`). */
  readonly maxBytes: number;
  /** A non-2xx body is kept up to this and truncated beyond it (`max_error_body_bytes`). */
  readonly maxErrorBytes: number;
}

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
 *
 * Unlike `request()`, memory is bounded (`limits`): a success body that grows
 * past `maxBytes` rejects with `ResponseTooLargeError` at once, and an error
 * body is cut at `maxErrorBytes` (the answer resolves with what was kept);
 * either way the connection is closed, so the upstream stops sending.
 */
export function collectBody(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: Signal | undefined,
  firstByte: { stop(): void } | undefined,
  limits: BodyLimits,
): Promise<CollectedResponse> {
  return new Promise<CollectedResponse>((resolve, reject) => {
    dispatcher.dispatch(options, new BodyCollector(resolve, reject, signal, firstByte, limits));
  });
}

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
    private readonly limits: BodyLimits,
  ) {
    if (signal === undefined) return;
    this.reason = watchAbort(signal, this.abortListener);
    if (this.reason === undefined) this.signal = signal;
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

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    const error = this.statusCode >= 300;
    const limit = error ? this.limits.maxErrorBytes : this.limits.maxBytes;
    if (this.length + chunk.length <= limit) {
      this.chunks.push(chunk);
      this.length += chunk.length;
      return;
    }
    const tooLarge = new ResponseTooLargeError(error ? 'max_error_body_bytes' : 'max_response_bytes', limit, 'the response body');
    if (error) {
      // Enough to classify and relay the error; the rest is never read.
      this.chunks.push(chunk.subarray(0, limit - this.length));
      this.length = limit;
      this.onResponseEnd();
    } else {
      this.onResponseError(controller, tooLarge);
    }
    controller.abort(tooLarge); // settled already: only closes the connection
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
    unwatchAbort(signal, this.abortListener);
  }
}

/** undici's `chunksDecode`: concatenate, skip a UTF-8 BOM, decode. */
export function decodeText(chunks: Buffer[], length: number): string {
  if (chunks.length === 0 || length === 0) return '';
  const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  const start = buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start, buffer.length);
}
