/**
 * A BatchSink that hands each batch to a worker thread (`write-worker.ts`), so
 * the database work of a write never runs on the event loop that serves
 * requests. A worker that dies fails the pending batch (the writer retries it)
 * and is started again on the next write.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BatchSink } from './batch-writer.js';
import type { StoreLocation } from './connections.js';
import type { WriteReply, WriteRequest } from './write-worker.js';
import { joinBatch, type EncodedRecord } from './encoded-record.js';

const WORKER_FILE = new URL('./write-worker.js', import.meta.url);

/**
 * The writer's young generation, in MB. What it allocates (a batch's text and
 * rows) is garbage once the batch is written, so a small nursery costs it
 * nothing; V8's default grows to 48 MB under sustained load, and at 16,000
 * requests/s that showed as ~70 MB more resident memory of the gateway.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 } as const;

/** False when running from the TypeScript sources (tests), where only the built worker can run. */
export function workerAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER_FILE));
}

export class WorkerSink implements BatchSink {
  private worker: Worker | undefined;
  private seq = 0;
  private pending: { seq: number; resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(private readonly location: StoreLocation) {}

  write(batch: readonly EncodedRecord[]): Promise<void> {
    const worker = this.ensureWorker();
    const seq = ++this.seq;
    return new Promise<void>((resolve, reject) => {
      this.pending = { seq, resolve, reject };
      worker.postMessage({ seq, batch: joinBatch(batch) } satisfies WriteRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(WORKER_FILE, { workerData: { location: this.location }, resourceLimits: WORKER_LIMITS });
    // The worker does not keep the process alive; shutdown closes it after the last flush.
    worker.unref();
    worker.on('message', (reply: WriteReply) => {
      const pending = this.pending;
      if (pending === undefined || pending.seq !== reply.seq) return;
      this.pending = undefined;
      if (reply.ok) pending.resolve();
      else pending.reject(new Error(reply.message));
    });
    const gone = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      const pending = this.pending;
      this.pending = undefined;
      pending?.reject(error);
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`usage write worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }
}
