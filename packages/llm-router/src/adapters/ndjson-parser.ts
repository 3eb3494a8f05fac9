import { LineReader } from './line-reader.js';

/**
 * Incremental newline-delimited JSON splitter (Ollama streams). Returns the
 * complete, non-blank lines as text; parsing is the caller's job so that it can
 * treat a bad line as a protocol failure of that upstream. Lines are held until
 * their newline arrives (see line-reader.ts: linear, and bounded by
 * `max_stream_event_bytes`).
 */
export class NdjsonParser extends LineReader {
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): string[] {
    return this.collect(this.decoder.decode(chunk, { stream: true }));
  }

  /** The body ended: a last line without its newline still counts. */
  end(): string[] {
    const out = this.collect(this.decoder.decode());
    const rest = this.takeRest();
    pushLine(rest, 0, rest.length, out);
    return out;
  }

  protected line(buffer: string, start: number, end: number): void {
    pushLine(buffer, start, end, this.out);
  }
}

function pushLine(buffer: string, start: number, end: number, out: string[]): void {
  let s = start;
  let e = end;
  while (s < e && isSpace(buffer.charCodeAt(s))) s++;
  while (e > s && isSpace(buffer.charCodeAt(e - 1))) e--;
  if (e > s) out.push(buffer.slice(s, e));
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 13;
}
