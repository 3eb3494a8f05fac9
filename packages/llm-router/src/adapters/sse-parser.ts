/**
 * Incremental Server-Sent Events parser (the `data:` field only, which is all
 * OpenAI-compatible servers use). Bytes arrive split at arbitrary points, even
 * inside a UTF-8 sequence, so decoding is streaming and lines are buffered until
 * their newline arrives. Plain `indexOf` scanning: no regex on the hot path.
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  private buffer = '';
  /** `data:` lines of the event being assembled (joined with `\n` per the spec). */
  private data: string | undefined;

  /** Feed bytes; returns the data payloads of the events completed by them. */
  push(chunk: Uint8Array): string[] {
    return this.feed(this.decoder.decode(chunk, { stream: true }));
  }

  /** The body ended: a final event without its blank line still counts. */
  end(): string[] {
    const out = this.feed(this.decoder.decode() + '\n');
    if (this.data !== undefined) {
      out.push(this.data);
      this.data = undefined;
    }
    return out;
  }

  private feed(text: string): string[] {
    const out: string[] = [];
    let buffer = this.buffer.length === 0 ? text : this.buffer + text;
    let start = 0;
    let nl = buffer.indexOf('\n', start);
    while (nl !== -1) {
      const end = nl > start && buffer.charCodeAt(nl - 1) === 13 /* \r */ ? nl - 1 : nl;
      this.line(buffer, start, end, out);
      start = nl + 1;
      nl = buffer.indexOf('\n', start);
    }
    this.buffer = start === 0 ? buffer : buffer.slice(start);
    buffer = '';
    return out;
  }

  private line(buffer: string, start: number, end: number, out: string[]): void {
    if (end === start) {
      // A blank line dispatches the event.
      if (this.data !== undefined) {
        out.push(this.data);
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
  }
}
