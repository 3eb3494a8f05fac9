/**
 * The request thread's end of the export thread (export-thread.ts): finished
 * spans are collected here and posted in batches, off the request path (a
 * timer or the next turn of the event loop, never inside a request), so a
 * request pays for pushing its spans onto an array. What is in flight
 * between the threads is bounded like the processor's own queue
 * (OTEL_BSP_MAX_QUEUE_SIZE): beyond it, a batch is dropped and counted, so a
 * stuck export thread never grows the request thread's memory.
 */
import { Worker } from 'node:worker_threads';
import type { WarningLog } from './export-failure-log.js';
import type { ExportThreadData, FromExportThread, ToExportThread } from './export-messages.js';
import type { SpanRecord } from './span-record.js';
import type { TracingConfig } from './tracing-config.js';

const THREAD_FILE = new URL('./export-thread.js', import.meta.url);

/** Spans per message to the export thread; a fuller batch is posted on the next turn of the event loop. */
const BATCH_SPANS = 256;
/** The longest a finished span waits on this thread before it is posted. */
const BATCH_DELAY_MS = 200;
/** The export thread's young generation, in MB: what it allocates is garbage once a batch is exported. */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 16 } as const;

/** The batch span processor's queue bound: OTEL_BSP_MAX_QUEUE_SIZE, 2048 by default (as the SDK reads it). */
function maxQueueSize(env: NodeJS.ProcessEnv): number {
  const value = Number(env.OTEL_BSP_MAX_QUEUE_SIZE);
  return Number.isInteger(value) && value > 0 ? value : 2048;
}

export class ExportThread {
  private batch: SpanRecord[] = [];
  private scheduled: 'timer' | 'immediate' | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Posted, not yet taken into the processor's queue. */
  private inFlight = 0;
  private droppedHere = 0;
  private droppedThere = 0;
  private alive = true;
  private shut: ((ok: boolean) => void) | undefined;
  private readonly maxInFlight = maxQueueSize(process.env);

  private constructor(
    private readonly worker: Worker,
    log: WarningLog,
  ) {
    worker.on('message', (message: FromExportThread) => {
      switch (message.type) {
        case 'taken':
          this.inFlight -= message.spans;
          return;
        case 'dropped':
          this.droppedThere = message.total;
          return;
        case 'warn':
          log.warn(message.fields, message.message);
          return;
        case 'shut':
          this.shut?.(message.ok);
          return;
        case 'ready':
          return;
      }
    });
    worker.on('exit', () => {
      this.alive = false;
      this.shut?.(false);
    });
  }

  /** Starts the thread and waits until its exporter is loaded. */
  static async start(config: TracingConfig, log: WarningLog): Promise<ExportThread> {
    const data: ExportThreadData = { config, timeOrigin: performance.timeOrigin };
    const worker = new Worker(THREAD_FILE, { workerData: data, resourceLimits: THREAD_LIMITS });
    await new Promise<void>((resolve, reject) => {
      const ready = (message: FromExportThread): void => {
        if (message.type !== 'ready') return;
        worker.off('message', ready);
        worker.off('error', reject);
        resolve();
      };
      worker.on('message', ready);
      worker.once('error', reject);
    });
    // The thread never keeps the process alive: shutdown() flushes it.
    worker.unref();
    worker.on('error', (error) => log.warn({ err: { name: error.name, message: error.message.slice(0, 200) } }, 'trace export thread failed: spans dropped'));
    return new ExportThread(worker, log);
  }

  /** Spans lost so far, on either thread. */
  get dropped(): number {
    return this.droppedHere + this.droppedThere;
  }

  /** A finished span: queued for the next post. */
  add(record: SpanRecord): void {
    this.batch.push(record);
    if (this.batch.length >= BATCH_SPANS) {
      if (this.scheduled !== 'immediate') {
        clearTimeout(this.timer);
        this.scheduled = 'immediate';
        setImmediate(() => this.post());
      }
    } else if (this.scheduled === undefined) {
      this.scheduled = 'timer';
      this.timer = setTimeout(() => this.post(), BATCH_DELAY_MS);
      this.timer.unref();
    }
  }

  /** Posts what is collected, exports what is queued, and stops; false when that did not finish within `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<boolean> {
    this.post();
    if (!this.alive) return false;
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<boolean>((resolve) => {
      this.shut = resolve;
      // Kept referenced, like the thread from here on: a process with nothing else left to do waits for the flush (bounded).
      timer = setTimeout(resolve, timeoutMs, false);
    });
    this.worker.ref();
    this.send({ type: 'shutdown' });
    try {
      return await done;
    } finally {
      clearTimeout(timer);
      await this.worker.terminate();
    }
  }

  private post(): void {
    clearTimeout(this.timer);
    this.scheduled = undefined;
    const spans = this.batch;
    if (spans.length === 0) return;
    this.batch = [];
    // What the bound has room for goes; the rest is dropped, as the processor drops what its full queue cannot take.
    const room = this.alive ? Math.max(0, this.maxInFlight - this.inFlight) : 0;
    const sent = spans.length <= room ? spans : spans.slice(0, room);
    this.droppedHere += spans.length - sent.length;
    if (sent.length === 0) return;
    this.inFlight += sent.length;
    this.send({ type: 'spans', spans: sent });
  }

  private send(message: ToExportThread): void {
    this.worker.postMessage(message);
  }
}
