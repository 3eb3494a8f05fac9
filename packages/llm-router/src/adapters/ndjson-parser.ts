/**
 * Incremental newline-delimited JSON splitter (Ollama streams). Returns the
 * complete, non-blank lines as text; parsing is the caller's job so that it can
 * treat a bad line as a protocol failure of that upstream.
 */
export class NdjsonParser {
  private readonly decoder = new TextDecoder();
  private buffer = '';

  push(chunk: Uint8Array): string[] {
    return this.feed(this.decoder.decode(chunk, { stream: true }), false);
  }

  /** The body ended: a last line without its newline still counts. */
  end(): string[] {
    return this.feed(this.decoder.decode(), true);
  }

  private feed(text: string, final: boolean): string[] {
    const out: string[] = [];
    const buffer = this.buffer.length === 0 ? text : this.buffer + text;
    let start = 0;
    let nl = buffer.indexOf('\n', start);
    while (nl !== -1) {
      pushLine(buffer, start, nl, out);
      start = nl + 1;
      nl = buffer.indexOf('\n', start);
    }
    if (final) {
      pushLine(buffer, start, buffer.length, out);
      this.buffer = '';
    } else {
      this.buffer = start === 0 ? buffer : buffer.slice(start);
    }
    return out;
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
