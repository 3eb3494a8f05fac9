/**
 * The usage store's writes and housekeeping, on a worker thread:
 * better-sqlite3 is synchronous, and a batch's INSERTs take tens of
 * milliseconds, a first statistics refresh of a large file hundreds — on the
 * main thread each would stall every request in flight. Here they stall
 * nobody. The worker owns its own store (and connection); the main thread
 * keeps one for queries.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { StoreLocation } from './connections.js';
import { errorText } from './error-text.js';
import type { RecordBatch } from './record-block.js';
import { UsageStore } from './usage-store.js';

/** What the main thread asks of the writer. */
export type Work =
  | { readonly kind: 'write'; /** Copied into the worker by the structured clone: a handful of typed arrays and strings. */ readonly batch: RecordBatch }
  | { readonly kind: 'prune'; readonly cutoff: number }
  | { readonly kind: 'statistics' };

/** A `Work` as sent: numbered, so its reply finds its caller. */
export type WorkRequest = Work & { readonly seq: number };

export type WorkReply =
  | { readonly seq: number; readonly ok: true; /** Records deleted, for `prune`. */ readonly value?: number }
  | { readonly seq: number; readonly ok: false; readonly message: string };

if (parentPort !== null) {
  const port = parentPort;
  const store = new UsageStore({ location: (workerData as { location: StoreLocation }).location, role: 'writes', onBackgroundError: () => undefined });
  const perform = (request: WorkRequest): Promise<number | undefined> => {
    switch (request.kind) {
      case 'write':
        return store.write(request.batch).then(() => undefined);
      case 'prune':
        return store.prune(request.cutoff);
      case 'statistics':
        return store.refreshStatistics().then(() => undefined);
    }
  };
  // Batches arrive one at a time, in order (the main thread's writer waits for each answer);
  // housekeeping may run beside one, each statement in its own transaction on this one connection.
  port.on('message', (request: WorkRequest) => {
    perform(request).then(
      (value) => port.postMessage({ seq: request.seq, ok: true, ...(value === undefined ? {} : { value }) } satisfies WorkReply),
      (error: unknown) => port.postMessage({ seq: request.seq, ok: false, message: errorText(error) } satisfies WorkReply),
    );
  });
}
