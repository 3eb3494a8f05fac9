/**
 * Keeps usage writes off the request path: `record()` only copies the record
 * into a bounded in-memory queue of column blocks (record-block.ts, one block
 * per batch); a timer writes the queue in batches. A slow or failing
 * database therefore never delays a request. When the queue is full the oldest
 * unwritten records are dropped and counted (logged at most once per interval).
 * A failed batch goes back to the front of the queue and is retried on the next
 * tick, so recording resumes by itself once the database is back.
 *
 * A full batch does not wait for the timer, so the queue never fills between
 * two ticks under heavy traffic (at 16 000 requests/s a 1 s tick would
 * overflow a 10 000-record queue); a partial one does, so that batches stay
 * large under load (see `drain`).
 *
 * Loss bound on `kill -9`: the records queued since the last successful batch,
 * i.e. at most `flushIntervalMs` of traffic plus the batch being written, while
 * the database is healthy.
 */
import { errorText } from './error-text.js';
import { RecordBlockBuilder, batchSize, type RecordBatch } from './record-block.js';
import type { RequestRecord } from './types.js';

export interface BatchSink {
  write(batch: RecordBatch): Promise<void>;
}

export interface BatchWriterOptions {
  /** Records held while the database is slow or down; beyond this the oldest are dropped. Default 10 000. */
  readonly maxQueued?: number;
  /** How often the queue is written. Default 1 000 ms (1 s). */
  readonly flushIntervalMs?: number;
  /** Records per transaction. Default 4 000. */
  readonly maxBatch?: number;
  /** At most one drop warning per this period. Default 60 000 ms (1 min). */
  readonly dropLogIntervalMs?: number;
  readonly now?: () => number;
  /** Called for dropped records (count), at most once per `dropLogIntervalMs`, with the total since the last call. */
  readonly onDropped?: (dropped: number) => void;
  /** Called for every failed batch write. */
  readonly onWriteError?: (error: Error) => void;
  /** Called after a batch was written. */
  readonly onWritten?: (count: number) => void;
}

export interface BatchWriterStatus {
  readonly queued: number;
  readonly dropped: number;
  readonly written: number;
  /** The last write failed and nothing has been written since. */
  readonly failing: boolean;
  readonly lastError: string | null;
  /** Epoch ms of the last failed write, or null. */
  readonly lastErrorAt: number | null;
}

export const DEFAULT_MAX_QUEUED = 10_000;
export const DEFAULT_FLUSH_INTERVAL_MS = 1_000; // 1 s
/**
 * Each batch also pays for its transaction, its rollup updates and its hand-over
 * to the writer thread, so batches should be large under load (see `drain`).
 * Still well below the queue's bound, so a batch in progress never pushes it to
 * drop; a block of 4,000 one-attempt records is about 1 MB.
 */
export const DEFAULT_MAX_BATCH = 4_000;
export const DEFAULT_DROP_LOG_INTERVAL_MS = 60_000; // 1 min

export class BatchWriter {
  private readonly maxQueued: number;
  private readonly maxBatch: number;
  private readonly dropLogIntervalMs: number;
  private readonly now: () => number;
  /** The block records go into now; sealed into `sealed` when full or when a flush starts. */
  private open: RecordBlockBuilder | undefined;
  /** Sealed blocks waiting to be written, oldest first (`from`: the first record not dropped). */
  private sealed: { block: RecordBatch['block']; from: number }[] = [];
  /** Records in `open` and `sealed` (not the batch being written). */
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  /** A flush was asked for while a write was under way: the drain writes what is queued then too. */
  private flushAsked = false;
  private droppedTotal = 0;
  private droppedUnreported = 0;
  private lastDropReport = -Infinity;
  private writtenTotal = 0;
  private failing = false;
  private lastError: string | null = null;
  private lastErrorAt: number | null = null;
  private stopped = false;

  constructor(
    private readonly sink: BatchSink,
    private readonly options: BatchWriterOptions = {},
  ) {
    this.maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.maxBatch = options.maxBatch ?? DEFAULT_MAX_BATCH;
    this.dropLogIntervalMs = options.dropLogIntervalMs ?? DEFAULT_DROP_LOG_INTERVAL_MS;
    this.now = options.now ?? Date.now;
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  /**
   * O(1), never waits, never throws: the request path calls this. Copies the
   * record into the open block (record-block.ts); a record the block cannot
   * take (one that breaks `RequestRecord`'s type) counts as dropped.
   */
  record(record: RequestRecord): void {
    if (this.stopped) return;
    const open = (this.open ??= new RecordBlockBuilder(this.maxBatch));
    try {
      open.add(record);
    } catch {
      this.countDropped(1);
      this.reportDrops();
      return;
    }
    this.queued++;
    if (open.full) this.sealOpen();
    if (this.queued > this.maxQueued) this.dropOldest(this.queued - this.maxQueued);
    else if (this.sealed.length > 0 && this.writing === undefined && !this.failing) void this.flush();
  }

  get status(): BatchWriterStatus {
    return {
      queued: this.queued,
      dropped: this.droppedTotal,
      written: this.writtenTotal,
      failing: this.failing,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
    };
  }

  /** Writes everything queued now (one batch at a time); resolves when done or when a write fails. */
  async flush(): Promise<void> {
    if (this.writing !== undefined) {
      this.flushAsked = true;
      return this.writing;
    }
    this.writing = this.drain().finally(() => {
      this.writing = undefined;
      // A flush asked for in the moment between the drain's end and this line.
      if (this.flushAsked && this.queued > 0 && !this.failing) void this.flush();
    });
    return this.writing;
  }

  /** Stops the timer, writes what is queued (bounded by `timeoutMs`), and refuses further records. */
  async close(timeoutMs = 5_000): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    let timeout: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timeout = setTimeout(resolve, timeoutMs);
      timeout.unref();
    });
    try {
      await Promise.race([this.flushAll(), deadline]);
    } finally {
      clearTimeout(timeout);
      this.stopped = true;
    }
  }

  private async flushAll(): Promise<void> {
    await this.writing;
    while (this.queued > 0 && !this.stopped) {
      const before = this.writtenTotal;
      await this.flush();
      if (this.writtenTotal === before) return; // the database refuses: give up rather than spin
    }
  }

  /**
   * Writes what is queued when it starts (the open block is sealed, however
   * few records it holds), then only full blocks: what arrives meanwhile waits
   * for a full block or the next flush (one asked for during this drain
   * counts: nothing waits longer than a flush interval plus the write under
   * way). Taking whatever had arrived during the previous write made batches
   * shrink under load to a few dozen records (each arrival window as short as
   * the write before it), and every batch pays for its transaction, its
   * rollup updates and its hand-over to the writer thread.
   */
  private async drain(): Promise<void> {
    this.reportDrops();
    this.flushAsked = false;
    // While the database fails, the open block keeps filling instead: the
    // backlog is then written in full blocks once it is back, not one small
    // block per tick of the outage.
    if (!this.failing || this.sealed.length === 0) this.sealOpen();
    for (;;) {
      if (this.sealed.length === 0) {
        if (!this.flushAsked || this.open === undefined) break;
        this.flushAsked = false;
        this.sealOpen();
      }
      const batch = this.sealed.shift()!;
      const size = batchSize(batch);
      this.queued -= size;
      try {
        await this.sink.write(batch);
      } catch (error) {
        this.putBack(batch);
        this.failing = true;
        this.lastError = errorText(error);
        this.lastErrorAt = this.now();
        this.options.onWriteError?.(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      this.failing = false;
      this.writtenTotal += size;
      this.options.onWritten?.(size);
    }
  }

  private sealOpen(): void {
    if (this.open === undefined || this.open.count === 0) return;
    this.sealed.push({ block: this.open.seal(), from: 0 });
    this.open = undefined;
  }

  /** A failed batch goes back in front of what arrived meanwhile; the oldest go if that overflows. */
  private putBack(batch: RecordBatch): void {
    this.sealed.unshift({ block: batch.block, from: batch.from });
    this.queued += batchSize(batch);
    if (this.queued > this.maxQueued) this.dropOldest(this.queued - this.maxQueued);
  }

  private dropOldest(count: number): void {
    this.countDropped(count);
    this.queued -= count;
    while (count > 0) {
      if (this.sealed.length === 0) this.sealOpen(); // the oldest waiting records are in the open block
      const oldest = this.sealed[0]!;
      const dropped = Math.min(count, batchSize(oldest));
      oldest.from += dropped;
      count -= dropped;
      if (batchSize(oldest) === 0) this.sealed.shift();
    }
    this.reportDrops();
  }

  private countDropped(count: number): void {
    this.droppedTotal += count;
    this.droppedUnreported += count;
  }

  private reportDrops(): void {
    if (this.droppedUnreported === 0) return;
    const now = this.now();
    if (now - this.lastDropReport < this.dropLogIntervalMs) return;
    this.lastDropReport = now;
    const count = this.droppedUnreported;
    this.droppedUnreported = 0;
    this.options.onDropped?.(count);
  }
}
