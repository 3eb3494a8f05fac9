/**
 * A BatchSink that hands each batch, and the store's housekeeping (retention,
 * planner statistics), to a worker thread (`write-worker.ts`), so no database
 * work of the recording side ever runs on the event loop that serves requests.
 * A worker that dies fails what it was doing (the writer retries a batch, the
 * next housekeeping run comes within the hour) and is started again on the
 * next call.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { BatchSink } from './batch-writer.js';
import type { StoreLocation } from './connections.js';
import type { RecordBatch } from './record-block.js';
import type { Housekeeping } from './usage-store.js';
import type { Work, WorkReply, WorkRequest } from './write-worker.js';

const WORKER_FILE = new URL('./write-worker.js', import.meta.url);

/**
 * The writer's young generation, in MB. What it allocates (a batch's copy and
 * rows) is garbage once the batch is written, so a small nursery costs it
 * nothing; V8's default grows to 48 MB under sustained load, and at 16,000
 * requests/s that showed as ~70 MB more resident memory of the gateway.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 } as const;

/** False when running from the TypeScript sources (tests), where only the built worker can run. */
export function workerAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER_FILE));
}

export class WorkerSink implements BatchSink, Housekeeping {
  private worker: Worker | undefined;
  private seq = 0;
  /** Each entry remembers the worker it went to: only that worker's death fails it. */
  private readonly pending = new Map<number, { worker: Worker; resolve: (value: number | undefined) => void; reject: (error: Error) => void }>();
  private closed = false;

  constructor(private readonly location: StoreLocation) {}

  async write(batch: RecordBatch): Promise<void> {
    await this.send({ kind: 'write', batch });
  }

  async prune(cutoff: number): Promise<number> {
    return (await this.send({ kind: 'prune', cutoff })) ?? 0;
  }

  async refreshStatistics(): Promise<void> {
    await this.send({ kind: 'statistics' });
  }

  /** Stops the worker; later calls fail at once instead of starting another. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private send(work: Work): Promise<number | undefined> {
    if (this.closed) return Promise.reject(new Error('usage write worker closed'));
    const worker = this.ensureWorker();
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(seq, { worker, resolve, reject });
      const request: WorkRequest = { seq, ...work };
      worker.postMessage(request);
    });
  }

  private ensureWorker(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(WORKER_FILE, { workerData: { location: this.location }, resourceLimits: WORKER_LIMITS });
    // The worker does not keep the process alive; shutdown closes it after the last flush.
    worker.unref();
    worker.on('message', (reply: WorkReply) => {
      const pending = this.pending.get(reply.seq);
      if (pending === undefined) return;
      this.pending.delete(reply.seq);
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(new Error(reply.message));
    });
    const gone = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [seq, pending] of this.pending) {
        if (pending.worker !== worker) continue;
        this.pending.delete(seq);
        pending.reject(error);
      }
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`usage write worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }
}
