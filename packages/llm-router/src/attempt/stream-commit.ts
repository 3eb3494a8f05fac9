import { InvalidResponseError, ResponseTooLargeError, type StreamEvent, type StreamOpen } from '../adapters/adapter.js';
import { abortedError, RouterError } from '../errors.js';
import type { AnswerCheck, AnswerFacts, CallObserver, CancelSignal, RequestOutcome, Usage } from '../types.js';
import { streamFinishReasons, streamStartFacts } from './answer-facts.js';
import { classifyStreamBreak, type Failure } from './classify-error.js';

/*
 * Why a stream commits to a target only at its first content (or tool-call)
 * delta, and why a failure after that is an error rather than a quiet end:
 *
 * Until a delta arrives the client has seen nothing, so an HTTP error, an error
 * event, malformed data or an empty stream can still be repaired by asking the
 * next target; the chunks read so far (e.g. the `role` chunk) are held back and
 * the client ends up with one clean stream from one target. Once a delta has
 * been relayed, switching targets would splice two different answers into one
 * text, so the router must not retry. Ending the stream cleanly would be worse:
 * a cut answer would look complete and be stored or acted upon as if it were.
 * So after the commit a failure makes the iterator throw `stream_interrupted`,
 * which the caller turns into an explicit error event (never `[DONE]`).
 */

/**
 * What one held-back event costs beyond its JSON text (the event object, the
 * string's header): counted so that endless tiny chunks hit the bound too.
 */
const HELD_EVENT_OVERHEAD_BYTES = 256;

/** How a committed stream ended, for health bookkeeping and in-flight counting. */
export type StreamEnd =
  | { readonly kind: 'complete' }
  | { readonly kind: 'cancelled' } // the consumer stopped reading (client went away)
  | { readonly kind: 'aborted' } // the request's signal fired
  | { readonly kind: 'interrupted'; readonly reason: string };

export type PreCommit =
  | { readonly kind: 'committed'; readonly stream: CommittedStream }
  | { readonly kind: 'failed'; readonly failure: Failure };

/**
 * Reads an opened stream until its first delta (content, reasoning, tool call
 * or refusal). Resolves `committed` with an iterator that replays the held-back
 * chunks, or `failed` with what went wrong (the body is then destroyed).
 * Transport errors and malformed data are thrown, like any adapter error, after
 * destroying the body.
 *
 * Of the alias's `fail_over_on` checks, only these can be decided here, from the
 * chunks up to and including the first delta, before anything reaches the
 * client: `content_filter` (a finish_reason content_filter in those chunks) and
 * `refusal` (the first delta is a refusal). `empty` is the stream ending
 * without a delta (`empty_stream`, always). `invalid_json` needs the whole text
 * and is never applied to a stream.
 *
 * The held-back chunks are bounded by `maxPreCommitBytes` (their JSON text plus
 * HELD_EVENT_OVERHEAD_BYTES each): an upstream that sends role-only chunks
 * without end would otherwise grow memory until the first-byte timeout. Past the
 * bound the attempt fails (`response_too_large`) and the next target is asked.
 */
export async function readUntilCommit(
  open: StreamOpen,
  target: string,
  signal: CancelSignal | undefined,
  checks: ReadonlySet<AnswerCheck>,
  onEnd: (end: StreamEnd) => void,
  maxPreCommitBytes: number,
  /** `stream_idle_timeout`: the longest silence of the upstream after the commit; 0: unbounded. */
  idleTimeoutMs = 0,
): Promise<PreCommit> {
  const it = open.body[Symbol.asyncIterator]();
  const held: StreamEvent[] = [];
  let heldBytes = 0;
  try {
    for (;;) {
      const step = await it.next();
      const events = step.done === true ? open.decoder.end() : open.decoder.push(step.value);
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!;
        if (event.type === 'error') return fail(open, { kind: 'stream_error', message: event.message });
        if (event.type === 'done') return fail(open, emptyStream(open));
        if (event.filtered === true && checks.has('content_filter')) {
          return fail(open, { kind: 'invalid_answer', reason: 'content_filter', detail: 'finish_reason content_filter before any content' });
        }
        if (event.refusal === true && checks.has('refusal')) {
          return fail(open, { kind: 'invalid_answer', reason: 'refusal', detail: 'the model refused (refusal delta)' });
        }
        held.push(event);
        if (event.delta || event.refusal === true) {
          for (let j = i + 1; j < events.length; j++) held.push(events[j]!);
          return { kind: 'committed', stream: new CommittedStream(open, it, held, target, signal, onEnd, idleTimeoutMs) };
        }
        heldBytes += event.data.length + HELD_EVENT_OVERHEAD_BYTES;
        if (heldBytes > maxPreCommitBytes) {
          const error = new ResponseTooLargeError('max_pre_commit_bytes', maxPreCommitBytes, 'the stream before its first content delta');
          return fail(open, { kind: 'error', error });
        }
      }
      if (step.done === true) return fail(open, emptyStream(open));
    }
  } catch (error) {
    open.body.destroy();
    throw error;
  }
}

function fail(open: StreamOpen, failure: Failure): PreCommit {
  // Closing the connection is cheaper than reading an unwanted rest, and stops token spend.
  open.body.destroy();
  return { kind: 'failed', failure };
}

/** A stream that ended before any delta: empty, or malformed when all it carried were events that could not be parsed. */
function emptyStream(open: StreamOpen): Failure {
  const skipped = open.decoder.skippedEvents;
  if (skipped === 0) return { kind: 'empty', reason: 'empty_stream' };
  return { kind: 'error', error: new InvalidResponseError(`the stream ended before any delta; ${skipped} event${skipped === 1 ? '' : 's'} could not be parsed`) };
}

/**
 * The caller-facing events iterator: yields each chunk's JSON text. A plain
 * iterator object rather than an async generator, so the per-chunk cost is one
 * promise and cleanup runs even when iteration never starts.
 */
export class CommittedStream implements AsyncIterableIterator<string> {
  usage: Usage | undefined;
  /** The request's outcome once settled; an interruption or abort reports it. */
  outcome: RequestOutcome | undefined;
  private queue: StreamEvent[];
  private index = 0;
  private bodyEnded = false;
  private ended = false;
  /** The call's observer, told how the stream ended; the finish reasons of the events are kept for it (only then). */
  private watch: CallObserver | undefined;
  private finishReasons: string[] | undefined;
  /**
   * `stream_idle_timeout`, timed only while this stream waits on the upstream (a
   * client slow to read is not the upstream's silence). One native timer per
   * stream, re-armed with `refresh()` per read: precise, and no allocation per chunk.
   */
  private idle: NodeJS.Timeout | undefined;
  private waiting = false;

  constructor(
    private readonly open: StreamOpen,
    private readonly it: AsyncIterator<Uint8Array>,
    held: StreamEvent[],
    private readonly target: string,
    private readonly signal: CancelSignal | undefined,
    private readonly onEnd: (end: StreamEnd) => void,
    private readonly idleTimeoutMs = 0,
  ) {
    this.queue = held;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Tells `watch` how this stream ends (CallObserver.streamEnded), with the finish reasons its events carry. */
  observe(watch: CallObserver): void {
    this.watch = watch;
    this.finishReasons = [];
  }

  /** What the stream's first event says of the answer (its id and model); read once, at the commit. */
  startFacts(): AnswerFacts {
    const first = this.queue.find((event) => event.type === 'chunk');
    return streamStartFacts(first?.type === 'chunk' ? first.data : '');
  }

  async next(): Promise<IteratorResult<string>> {
    if (this.ended) return { done: true, value: undefined };
    for (;;) {
      while (this.index < this.queue.length) {
        const event = this.queue[this.index++]!;
        if (event.type === 'chunk') {
          if (event.usage !== undefined) this.usage = event.usage;
          if (event.finish === true && this.finishReasons !== undefined) this.finishReasons.push(...(event.finishReasons ?? streamFinishReasons(event.data)));
          if (event.hidden === true) continue;
          return { done: false, value: event.data };
        }
        if (event.type === 'done') {
          this.finish({ kind: 'complete' });
          if (!this.bodyEnded) void drain(this.it); // let the socket return to the pool
          return { done: true, value: undefined };
        }
        throw this.interrupt('stream_error', `${this.target} sent an error event mid-stream`);
      }
      if (this.bodyEnded) throw this.interrupt('socket_closed', `${this.target} ended the stream without finishing it`);
      let step: IteratorResult<Uint8Array>;
      try {
        this.armIdle();
        step = await this.it.next();
        this.waiting = false;
        this.queue = step.done === true ? this.open.decoder.end() : this.open.decoder.push(step.value);
      } catch (error) {
        this.waiting = false;
        throw this.transportError(error);
      }
      this.index = 0;
      if (step.done === true) this.bodyEnded = true;
    }
  }

  /** The consumer stopped early (client disconnected): close the upstream connection at once. */
  async return(): Promise<IteratorResult<string>> {
    if (!this.ended) {
      this.open.body.destroy();
      this.finish({ kind: 'cancelled' });
    }
    return { done: true, value: undefined };
  }

  private transportError(error: unknown): RouterError {
    if (this.signal?.aborted === true) {
      this.open.body.destroy();
      this.finish({ kind: 'aborted' });
      return abortedError({ outcome: this.outcome, cause: error });
    }
    const reason = classifyStreamBreak(error);
    const message = reason === 'stream_idle_timeout' ? `${this.target} went silent mid-stream (nothing for ${this.idleTimeoutMs} ms, stream_idle_timeout)` : `${this.target} stream broke off`;
    return this.interrupt(reason, message, error);
  }

  private interrupt(reason: string, message: string, cause?: unknown): RouterError {
    this.open.body.destroy();
    this.finish({ kind: 'interrupted', reason });
    return new RouterError('stream_interrupted', message, { outcome: this.outcome, cause });
  }

  private armIdle(): void {
    if (this.idleTimeoutMs <= 0) return;
    this.waiting = true;
    if (this.idle === undefined) {
      this.idle = setTimeout(idleExpired, this.idleTimeoutMs, this);
      this.idle.unref();
    } else {
      this.idle.refresh();
    }
  }

  /** @internal the idle timer ran out: when still waiting on the upstream, break the body off (the pending read rejects). */
  idleExpired(): void {
    if (!this.waiting || this.ended) return;
    this.open.body.destroy(new StreamIdleTimeoutError(this.idleTimeoutMs));
  }

  private finish(end: StreamEnd): void {
    if (this.ended) return;
    this.ended = true;
    if (this.idle !== undefined) clearTimeout(this.idle);
    this.onEnd(end);
    const watch = this.watch;
    if (watch === undefined) return;
    try {
      watch.streamEnded({
        end: end.kind,
        reason: end.kind === 'interrupted' ? end.reason : undefined,
        finishReasons: this.finishReasons ?? [],
        usage: this.usage,
      });
    } catch {
      // an observer must never break the stream
    }
  }
}

function idleExpired(stream: CommittedStream): void {
  stream.idleExpired();
}

/** What a committed stream's body is destroyed with when the upstream stays silent past `stream_idle_timeout`. */
class StreamIdleTimeoutError extends Error {
  override readonly name = 'StreamIdleTimeoutError';
  readonly code = 'stream_idle_timeout';

  constructor(timeoutMs: number) {
    super(`nothing from the upstream for ${timeoutMs} ms after the stream began`);
  }
}

async function drain(it: AsyncIterator<Uint8Array>): Promise<void> {
  try {
    for (;;) if ((await it.next()).done === true) return;
  } catch {
    // The answer is complete; a late transport error no longer matters.
  }
}
