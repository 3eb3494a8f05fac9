import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { splitContent, type Dialect, type RenderedStream, type ResolvedAnswer } from './dialect.js';
import { resolveEmbeddings } from './fake-embeddings.js';
import type { AnswerBehavior, FakeBehavior } from './types.js';

const DEFAULT_CHUNKS = 3;
/** An "endless" fault stops after this much anyway, so a client that never leaves cannot keep the fake busy forever. */
const ENDLESS_CAP_BYTES = 1024 ** 3; // 1 GiB
/** Generated bodies go out in writes of this size. */
const FILL_CHUNK_BYTES = 64 * 1024; // 64 KiB
const PADDING = Buffer.alloc(FILL_CHUNK_BYTES, 0x61); // 'a'
const PAD_MARKER = '\u0001PAD\u0001';
const DEFAULT_PROMPT_TOKENS = 10;
const EMPTY_ANSWER: AnswerBehavior = Object.freeze({ kind: 'answer', content: '' }) as AnswerBehavior;

/** One chat request being answered. */
export interface Exchange {
  readonly res: ServerResponse;
  /** The response is over (ended, or the connection closed): pending steps must do nothing. */
  finished: boolean;
  /** We closed the socket on purpose (cut/destroy/stop), so the close is not the client's doing. */
  selfClosed: boolean;
  /** The one pending pacing/delay timer, cleared when the exchange finishes or the fake closes. */
  timer: NodeJS.Timeout | undefined;
}

type Rendered =
  | { readonly stream: false; readonly headers: OutgoingHttpHeaders; readonly body: Buffer }
  | { readonly stream: true; readonly headers: OutgoingHttpHeaders; readonly parts: RenderedStream };

function later(ex: Exchange, ms: number, step: () => void): void {
  ex.timer = setTimeout(() => {
    ex.timer = undefined;
    if (!ex.finished) step();
  }, ms);
}

/** Abrupt end: flush what was written, then close the socket with no terminator. */
function cut(ex: Exchange, data: Buffer): void {
  ex.selfClosed = true;
  const socket = ex.res.socket;
  if (data.length > 0) ex.res.write(data);
  else ex.res.flushHeaders();
  socket?.end(() => socket.destroy());
}

/**
 * Sends `head`, then `filler` repeated up to `total` bytes, then `tail`, with
 * backpressure (nothing is held whole). `total` undefined: until the client
 * leaves (at most ENDLESS_CAP_BYTES, then the socket is cut).
 */
function pump(ex: Exchange, head: Buffer, filler: Buffer, total: number | undefined, tail: Buffer): void {
  const { res } = ex;
  const limit = total ?? ENDLESS_CAP_BYTES;
  let sent = 0;
  res.write(head);
  const step = (): void => {
    while (!ex.finished && sent < limit) {
      const n = Math.min(filler.length, limit - sent);
      sent += n;
      if (!res.write(n === filler.length ? filler : filler.subarray(0, n))) {
        res.once('drain', step);
        return;
      }
    }
    if (ex.finished) return;
    if (total === undefined) cut(ex, Buffer.alloc(0));
    else res.end(tail);
  };
  step();
}

/** `buffer` repeated to at least FILL_CHUNK_BYTES, for fewer, larger writes. */
function repeatToFill(buffer: Buffer): Buffer {
  return Buffer.concat(Array.from({ length: Math.ceil(FILL_CHUNK_BYTES / buffer.length) }, () => buffer));
}

/**
 * Turns a behaviour into bytes on the wire. Answers are rendered once per (behaviour object,
 * model, stream, usage) and cached, so the hot path is a lookup plus one or two writes —
 * the benchmark measures gateway overhead against this fake in fractions of a millisecond.
 */
export class Responder {
  readonly #cache = new WeakMap<FakeBehavior, Map<string, Rendered>>();

  constructor(
    private readonly dialect: Dialect,
    private readonly name: string | undefined,
  ) {}

  respond(ex: Exchange, behavior: FakeBehavior, model: string, body: unknown, stream: boolean): void {
    const { res } = ex;
    switch (behavior.kind) {
      case 'answer':
        return this.#answer(ex, behavior, behavior, model, body, stream);
      case 'empty_answer':
        return this.#answer(ex, EMPTY_ANSWER, behavior, model, body, stream);
      case 'empty_stream':
        if (!stream) return this.#answer(ex, EMPTY_ANSWER, behavior, model, body, stream);
        res.writeHead(200, { 'content-type': this.dialect.streamContentType, 'cache-control': 'no-cache' });
        res.end(this.dialect.emptyStream());
        return;
      case 'malformed_json': {
        const data = stream ? this.dialect.malformedStream() : this.dialect.malformedJson();
        res.writeHead(200, { 'content-type': stream ? this.dialect.streamContentType : 'application/json', 'content-length': data.length });
        res.end(data);
        return;
      }
      case 'status': {
        const data =
          behavior.body === undefined
            ? this.dialect.errorBody(behavior.status, model)
            : Buffer.from(typeof behavior.body === 'string' ? behavior.body : JSON.stringify(behavior.body));
        res.writeHead(behavior.status, { 'content-type': 'application/json', 'content-length': data.length, ...behavior.headers });
        res.end(data);
        return;
      }
      case 'hang':
        // Nothing: the exchange stays open until the client leaves or the fake stops.
        return;
      case 'destroy':
        ex.selfClosed = true;
        res.socket?.destroy();
        return;
      case 'huge_body':
        return this.#huge(ex, behavior.bytes, behavior.status ?? 200, model);
      case 'endless_role_chunks':
        res.writeHead(200, { 'content-type': this.dialect.streamContentType, 'cache-control': 'no-cache' });
        return pump(ex, Buffer.alloc(0), repeatToFill(this.dialect.roleOnlyChunk(model)), undefined, Buffer.alloc(0));
      case 'endless_line':
        res.writeHead(200, { 'content-type': this.dialect.streamContentType, 'cache-control': 'no-cache' });
        return pump(ex, this.dialect.endlessLineStart(model), PADDING, undefined, Buffer.alloc(0));
    }
  }

  /** A JSON body of `bytes` bytes of padding wrapped in an answer (200) or an error (any other status). */
  #huge(ex: Exchange, bytes: number, status: number, model: string): void {
    let head: Buffer;
    let tail: Buffer;
    if (status === 200) {
      const text = this.dialect.renderJson(this.#resolve({ kind: 'answer', content: PAD_MARKER }, model), model).toString();
      const at = text.indexOf(JSON.stringify(PAD_MARKER).slice(1, -1));
      head = Buffer.from(text.slice(0, at));
      tail = Buffer.from(text.slice(at + JSON.stringify(PAD_MARKER).length - 2));
    } else {
      head = Buffer.from('{"error":{"message":"');
      tail = Buffer.from('","type":"invalid_request_error","param":null,"code":null}}');
    }
    const padding = Math.max(0, bytes - head.length - tail.length);
    ex.res.writeHead(status, { 'content-type': 'application/json', 'content-length': head.length + padding + tail.length });
    pump(ex, head, PADDING, padding, tail);
  }

  /**
   * An embeddings request: `answer` renders vectors (depending on the input, so
   * never cached), `empty_answer` / `empty_stream` answer no vectors at all;
   * every other fault works as for chat.
   */
  respondEmbeddings(ex: Exchange, behavior: FakeBehavior, model: string, body: unknown): void {
    if (behavior.kind !== 'answer' && behavior.kind !== 'empty_answer' && behavior.kind !== 'empty_stream') {
      return this.respond(ex, behavior, model, body, false);
    }
    const a = behavior.kind === 'answer' ? behavior : undefined;
    const resolved = resolveEmbeddings(body, model, this.name, a === undefined ? { count: 0 } : a.embedding);
    const data = this.dialect.renderEmbeddings(resolved, model);
    const send = () => {
      ex.res.writeHead(200, { 'content-type': 'application/json', 'content-length': data.length, ...a?.headers });
      ex.res.end(data);
    };
    if (a?.headerDelayMs !== undefined && a.headerDelayMs > 0) later(ex, a.headerDelayMs, send);
    else send();
  }

  #answer(ex: Exchange, a: AnswerBehavior, key: FakeBehavior, model: string, body: unknown, stream: boolean): void {
    const usage = stream && this.dialect.wantsUsage(body);
    const r = this.#render(a, key, model, stream, usage);
    const send = () => (r.stream ? this.#stream(ex, a, r.headers, r.parts) : (ex.res.writeHead(200, r.headers), ex.res.end(r.body)));
    if (a.headerDelayMs !== undefined && a.headerDelayMs > 0) later(ex, a.headerDelayMs, send);
    else send();
  }

  #stream(ex: Exchange, a: AnswerBehavior, headers: OutgoingHttpHeaders, rendered: RenderedStream): void {
    const { res } = ex;
    const s = a.badEventAfterChunks === undefined ? rendered : this.#withBadEvent(rendered, a.badEventAfterChunks);
    const n = s.frames.length;
    // Where the stream stops early, if at all: the earlier of the cut and the error event.
    let stopAt = n;
    let tail: 'end' | 'cut' | 'error' = 'end';
    if (a.errorEventAfterChunks !== undefined) {
      stopAt = Math.min(a.errorEventAfterChunks, n);
      tail = 'error';
    }
    if (a.cutAfterChunks !== undefined && (tail === 'end' || a.cutAfterChunks < stopAt)) {
      stopAt = Math.min(a.cutAfterChunks, n);
      tail = 'cut';
    }
    res.writeHead(200, headers);
    const interval = a.chunkIntervalMs ?? 0;
    if (interval <= 0) {
      if (tail === 'end') res.end(s.full);
      else if (tail === 'error') res.end(Buffer.concat([...s.frames.slice(0, stopAt), s.error]));
      else cut(ex, Buffer.concat(s.frames.slice(0, stopAt)));
      return;
    }
    // Paced: first chunk right away (with the headers), then one per interval.
    let i = 0;
    const step = (): void => {
      if (i < stopAt) res.write(s.frames[i++]!);
      if (i < stopAt) return later(ex, interval, step);
      if (tail === 'end') res.end(s.end);
      else if (tail === 'error') res.end(s.error);
      else cut(ex, Buffer.alloc(0));
    };
    if (stopAt === 0) res.flushHeaders();
    step();
  }

  /** The stream with one garbled event (a JSON object cut short) inserted after `after` frames. */
  #withBadEvent(s: RenderedStream, after: number): RenderedStream {
    const sse = this.dialect.streamContentType.includes('event-stream');
    const bad = Buffer.from(sse ? 'data: {"choices":[{"delta":{"content":"garb\n\n' : '{"message":{"content":"garb\n');
    const at = Math.min(after, s.frames.length);
    const frames = [...s.frames.slice(0, at), bad, ...s.frames.slice(at)];
    return { ...s, frames, full: Buffer.concat([...frames, s.end]) };
  }

  #render(a: AnswerBehavior, key: FakeBehavior, model: string, stream: boolean, usage: boolean): Rendered {
    let perBehavior = this.#cache.get(key);
    if (perBehavior === undefined) this.#cache.set(key, (perBehavior = new Map()));
    const cacheKey = `${stream ? 's' : 'j'}${usage ? 'u' : '-'}${model}`;
    let r = perBehavior.get(cacheKey);
    if (r === undefined) {
      r = this.#build(a, model, stream, usage);
      perBehavior.set(cacheKey, r);
    }
    return r;
  }

  #build(a: AnswerBehavior, model: string, stream: boolean, usage: boolean): Rendered {
    const resolved = this.#resolve(a, model);
    if (stream) {
      const headers = { 'content-type': this.dialect.streamContentType, 'cache-control': 'no-cache', ...a.headers };
      return { stream: true, headers, parts: this.dialect.renderStream(resolved, model, usage) };
    }
    const body = this.dialect.renderJson(resolved, model);
    return { stream: false, headers: { 'content-type': 'application/json', 'content-length': body.length, ...a.headers }, body };
  }

  #resolve(a: AnswerBehavior, model: string): ResolvedAnswer {
    const toolCalls = a.toolCalls ?? [];
    const content =
      a.refusal !== undefined ? null : (a.content ?? (toolCalls.length > 0 ? null : `Hello from ${model}${this.name === undefined ? '' : ` via ${this.name}`}`));
    const text = a.refusal ?? content ?? '';
    return {
      content,
      parts: splitContent(text, a.chunks ?? DEFAULT_CHUNKS),
      toolCalls,
      usage: a.usage ?? { prompt_tokens: DEFAULT_PROMPT_TOKENS, completion_tokens: Math.ceil(text.length / 4) },
      finishReason: a.finishReason,
      stopSequence: a.stopSequence,
      refusal: a.refusal,
      thinking: a.thinking,
    };
  }
}
