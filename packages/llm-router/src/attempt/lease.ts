/**
 * What a request or an attempt holds while it runs — a first-byte timer, an
 * in-flight count, a background slot — as one object released exactly once.
 *
 * Why: these used to travel through flags and callbacks across the attempt
 * loop, the target call and the stream commit, and a path that forgot one (a
 * committed stream its consumer never read) leaked a background slot for good.
 * Now each owner releases its lease unconditionally when it is done (in a
 * `finally`), and ownership moves by `handOver`: the old lease then holds
 * nothing, so its release is a no-op and nothing is released twice or never.
 */
export class Lease {
  private parts: Array<() => void> = [];
  private released = false;

  /** Adds something to give back on release (at once, if the lease is released already). */
  hold(release: () => void): void {
    if (this.released) release();
    else this.parts.push(release);
  }

  /** Moves everything held to `next`; this lease then holds nothing. */
  handOver(next: Lease): void {
    const parts = this.parts;
    this.parts = [];
    for (const part of parts) next.hold(part);
  }

  /** Gives everything back, last taken first; later calls do nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    const parts = this.parts;
    this.parts = [];
    for (let i = parts.length - 1; i >= 0; i--) {
      try {
        parts[i]!();
      } catch {
        // One part failing must not keep the others held.
      }
    }
  }

  get isReleased(): boolean {
    return this.released;
  }
}
