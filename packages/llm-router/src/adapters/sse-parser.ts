import { LineReader } from './line-reader.js';

/**
 * Incremental Server-Sent Events parser (the `data:` field only, which is all
 * OpenAI-compatible servers use). Bytes arrive split at arbitrary points, even
 * inside a UTF-8 sequence, so decoding is streaming and lines are held until
 * their newline arrives (see line-reader.ts: linear, and bounded by
 * `max_stream_event_bytes`, as is an event's data across several `data:` lines).
 * Plain `indexOf` scanning: no regex on the hot path.
 */
export class SseParser extends LineReader {
  private readonly decoder = new TextDecoder();
  /** `data:` lines of the event being assembled (joined with `\n` per the spec). */
  private data: string | undefined;

  /** Feed bytes; returns the data payloads of the events completed by them. */
  push(chunk: Uint8Array): string[] {
    return this.collect(this.decoder.decode(chunk, { stream: true }));
  }

  /** The body ended: a final event without its blank line still counts. */
  end(): string[] {
    const out = this.collect(this.decoder.decode() + '\n');
    if (this.data !== undefined) {
      out.push(this.data);
      this.data = undefined;
    }
    return out;
  }

  protected line(buffer: string, start: number, lineEnd: number): void {
    const end = lineEnd > start && buffer.charCodeAt(lineEnd - 1) === 13 /* \r */ ? lineEnd - 1 : lineEnd;
    if (end === start) {
      // A blank line dispatches the event.
      if (this.data !== undefined) {
        this.out.push(this.data);
        this.data = undefined;
      }
      return;
    }
    if (buffer.charCodeAt(start) === 58 /* : */) return; // comment / keep-alive
    if (!buffer.startsWith('data:', start)) return; // event:, id:, retry: carry nothing we relay
    let valueStart = start + 5;
    if (buffer.charCodeAt(valueStart) === 32 /* space */) valueStart++;
    const value = buffer.slice(valueStart, end);
    this.data = this.data === undefined ? value : this.data + '\n' + value;
    this.checkSize(this.data.length);
  }
}
