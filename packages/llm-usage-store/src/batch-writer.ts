/**
 * Keeps usage writes off the request path: `record()` only appends to a bounded
 * in-memory queue; a timer writes the queue in batches. A slow or failing
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
import { rowId } from './row-id.js';
import type { RequestRecord } from './types.js';
import { encodeRecord, type EncodedRecord } from './encoded-record.js';

export interface BatchSink {
  write(batch: readonly EncodedRecord[]): Promise<void>;
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
 * drop; a batch of 4,000 records is about 2 MB of text.
 */
export const DEFAULT_MAX_BATCH = 4_000;
export const DEFAULT_DROP_LOG_INTERVAL_MS = 60_000; // 1 min

export class BatchWriter {
  private readonly maxQueued: number;
  private readonly maxBatch: number;
  private readonly dropLogIntervalMs: number;
  private readonly now: () => number;
  /** FIFO as an array with a moving head: O(1) append and take. */
  private queue: EncodedRecord[] = [];
  private head = 0;
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

  /** O(1), never waits: the request path calls this. Encodes the record now (see encoded-record.ts). */
  record(record: RequestRecord): void {
    if (this.stopped) return;
    this.queue.push(encodeRecord(rowId(record.time), record));
    const size = this.size;
    if (size > this.maxQueued) this.dropOldest(size - this.maxQueued);
    else if (size >= this.maxBatch && this.writing === undefined && !this.failing) void this.flush();
  }

  get status(): BatchWriterStatus {
    return {
      queued: this.size,
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
      if (this.flushAsked && this.size > 0 && !this.failing) void this.flush();
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
    while (this.size > 0 && !this.stopped) {
      const before = this.writtenTotal;
      await this.flush();
      if (this.writtenTotal === before) return; // the database refuses: give up rather than spin
    }
  }

  private get size(): number {
    return this.queue.length - this.head;
  }

  /**
   * Writes what is queued when it starts, in batches of up to `maxBatch`, and
   * then only full batches: what arrives meanwhile waits for a full batch or
   * the next flush (one asked for during this drain counts: nothing waits
   * longer than a flush interval plus the write under way). Taking whatever
   * had arrived during the previous write made batches shrink under load to a
   * few dozen records (each arrival window as short as the write before it),
   * and every batch pays for its transaction, its rollup updates and its
   * hand-over to the writer thread.
   */
  private async drain(): Promise<void> {
    this.reportDrops();
    this.flushAsked = false;
    let due = this.size;
    while (this.size > 0) {
      if (due <= 0 && this.size < this.maxBatch) {
        if (!this.flushAsked) break;
        this.flushAsked = false;
        due = this.size;
      }
      const batch = this.take(this.maxBatch);
      due -= batch.length;
      try {
        await this.sink.write(batch);
      } catch (error) {
        this.putBack(batch);
        this.failing = true;
        this.lastError = error instanceof Error ? error.message : String(error);
        this.lastErrorAt = this.now();
        this.options.onWriteError?.(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      this.failing = false;
      this.writtenTotal += batch.length;
      this.options.onWritten?.(batch.length);
    }
  }

  private take(count: number): EncodedRecord[] {
    const batch = this.queue.slice(this.head, this.head + count);
    this.head += batch.length;
    this.compact();
    return batch;
  }

  /** A failed batch goes back in front of what arrived meanwhile; the oldest go if that overflows. */
  private putBack(batch: EncodedRecord[]): void {
    this.queue = batch.concat(this.queue.slice(this.head));
    this.head = 0;
    if (this.size > this.maxQueued) this.dropOldest(this.size - this.maxQueued);
  }

  private dropOldest(count: number): void {
    this.head += count;
    this.droppedTotal += count;
    this.droppedUnreported += count;
    this.compact();
    this.reportDrops();
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

  private compact(): void {
    if (this.head > 1_024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
