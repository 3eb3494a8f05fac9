/**
 * Trace and span ids (16 and 8 random bytes, as lowercase hex) cut from a
 * pool of random bytes refilled 4 kB at a time, so an id costs a slice of a
 * buffer rather than a call into the random source: one request takes three.
 * An all-zero id is invalid (W3C trace context); one is drawn again.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;

export class TraceIds {
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  private offset = POOL_BYTES;

  traceId(): string {
    return this.next(16);
  }

  spanId(): string {
    return this.next(8);
  }

  private next(bytes: number): string {
    for (;;) {
      if (this.offset + bytes > POOL_BYTES) {
        randomFillSync(this.pool);
        this.offset = 0;
      }
      const start = this.offset;
      this.offset += bytes;
      for (let i = start; i < start + bytes; i++) if (this.pool[i] !== 0) return this.pool.toString('hex', start, start + bytes);
    }
  }
}
