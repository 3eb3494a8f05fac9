import { DEFAULT_SETTINGS } from '../config/defaults.js';
import { ResponseTooLargeError } from './adapter.js';

/**
 * Splits decoded stream text into lines for the SSE and NDJSON parsers, with
 * the unfinished last line held until its newline arrives.
 *
 * Why not `buffer + text` and scan from the start: a line without a newline
 * (an upstream sending one endless line) then grows the buffer on every chunk
 * and is re-scanned each time — quadratic, enough to stall the event loop.
 * Here only the new text is scanned, the held pieces are joined once per line,
 * and a held line longer than `maxEventBytes` (`max_stream_event_bytes`,
 * counted in characters: the same as bytes for the ASCII of JSON) throws
 * `ResponseTooLargeError` instead of growing.
 */
export abstract class LineReader {
  private held: string[] = [];
  private heldLength = 0;
  /** What the current `collect()` call returns; `line()` pushes to it. */
  protected out: string[] = [];

  constructor(protected readonly maxEventBytes: number = DEFAULT_SETTINGS.maxStreamEventBytes) {}

  /** One complete line: `text.slice(start, end)`, without its `\n`. */
  protected abstract line(text: string, start: number, end: number): void;

  /** Feeds decoded text: calls `line()` for every line it completes, holds the rest; returns what they pushed. */
  protected collect(text: string): string[] {
    const out: string[] = [];
    this.out = out;
    this.split(text);
    this.out = [];
    return out;
  }

  private split(text: string): void {
    let nl = text.indexOf('\n');
    if (nl === -1) {
      this.hold(text);
      return;
    }
    let buffer = text;
    if (this.heldLength > 0) {
      this.held.push(text);
      buffer = this.held.join('');
      nl += this.heldLength;
      this.held = [];
      this.heldLength = 0;
    }
    let start = 0;
    while (nl !== -1) {
      this.line(buffer, start, nl);
      start = nl + 1;
      nl = buffer.indexOf('\n', start);
    }
    if (start < buffer.length) this.hold(start === 0 ? buffer : buffer.slice(start));
  }

  /** The unfinished last line, handed over (the body ended); empty when none. */
  protected takeRest(): string {
    const rest = this.held.length === 1 ? this.held[0]! : this.held.join('');
    this.held = [];
    this.heldLength = 0;
    return rest;
  }

  /** Throws when an event being assembled has grown past the bound. */
  protected checkSize(length: number): void {
    if (length > this.maxEventBytes) throw new ResponseTooLargeError('max_stream_event_bytes', this.maxEventBytes, 'a stream event');
  }

  private hold(text: string): void {
    if (text.length === 0) return;
    this.heldLength += text.length;
    this.checkSize(this.heldLength);
    this.held.push(text);
  }
}
