/**
 * The usage store's writes, on a worker thread: better-sqlite3 is synchronous,
 * and building and running a batch's INSERTs takes tens of milliseconds — on the
 * main thread that would stall every request each time a batch is written. Here
 * it stalls nobody. The worker owns its own store (and connection); the main
 * thread keeps one for queries.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StoreLocation } from './connections.js';
import { UsageStore } from './usage-store.js';

export interface WriteRequest {
  readonly seq: number;
  /** The batch's encoded records as one JSON array text (`joinBatch`). */
  readonly batch: string;
}

export type WriteReply = { readonly seq: number; readonly ok: true } | { readonly seq: number; readonly ok: false; readonly message: string };

if (parentPort !== null) {
  const port = parentPort;
  const store = new UsageStore({ location: (workerData as { location: StoreLocation }).location, role: 'writes', onBackgroundError: () => undefined });
  // One batch at a time, in order: the main thread's writer never sends a second before the first is answered.
  port.on('message', (request: WriteRequest) => {
    store.write(request.batch).then(
      () => port.postMessage({ seq: request.seq, ok: true } satisfies WriteReply),
      (error: unknown) => port.postMessage({ seq: request.seq, ok: false, message: error instanceof Error ? error.message : String(error) } satisfies WriteReply),
    );
  });
}
