/**
 * Where response schemas are compiled and answers checked against them: a
 * worker thread, one job at a time, each within a time budget.
 *
 * Why not the event loop: Ajv turns a schema into JavaScript, which V8 then
 * compiles, and a client chooses the schema. For a large one that is a second
 * or more of CPU (a 140 KB schema: ~3 s; 1,000 subschemas: 0.2–1 s here); five
 * in parallel stalled every other request, `/healthz` included, for 5–12 s. On
 * the worker such a job delays only the schema jobs queued behind it, and past
 * its budget the worker is ended with it and a fresh one takes the rest.
 *
 * From the TypeScript sources (tests) there is no built worker: jobs then run
 * in place, on the caller's thread, without a budget.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { runSchemaJob, SCHEMA_WORKER_READY, type SchemaJob, type SchemaJobRequest, type SchemaWorkerMessage } from './schema-job.js';

/** How long one job may take on the worker before it is ended (with the worker). */
export const SCHEMA_JOB_BUDGET_MS = 2_000; // 2 s

const WORKER_FILE = new URL('./schema-worker.js', import.meta.url);

/**
 * A bound on what the worker may hold; past it the worker dies and its job fails.
 * Compiled schemas are bounded by their generations (response-schema.ts) far below this.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 512 } as const;

/** `ok`: the job ran (`problem` as in SchemaJobReply); otherwise `why` it could not finish (e.g. `took longer than 2 s`). */
export type SchemaOutcome = { readonly ok: true; readonly problem: string | undefined } | { readonly ok: false; readonly why: string };

export interface SchemaChecker {
  run(job: SchemaJob): Promise<SchemaOutcome>;
  /** Ends the worker; jobs still waiting, and later ones, end as not finished. */
  close(): Promise<void>;
}

/** A checker on the built worker when there is one (the package's `dist/`), else one that runs jobs in place. */
export function createSchemaChecker(options: { budgetMs?: number } = {}): SchemaChecker {
  return existsSync(fileURLToPath(WORKER_FILE)) ? new WorkerSchemaChecker(options.budgetMs ?? SCHEMA_JOB_BUDGET_MS) : IN_PLACE;
}

const IN_PLACE: SchemaChecker = {
  run: (job) => Promise.resolve({ ok: true, problem: runSchemaJob(job) }),
  close: () => Promise.resolve(),
};

interface Queued {
  readonly job: SchemaJob;
  readonly resolve: (outcome: SchemaOutcome) => void;
}

interface Running {
  readonly seq: number;
  readonly item: Queued;
  readonly worker: Worker;
  readonly timer: NodeJS.Timeout;
}

class WorkerSchemaChecker implements SchemaChecker {
  private worker: Worker | undefined;
  /** The worker has loaded its modules: a job's budget starts when it is sent, so it must not include that. */
  private ready = false;
  private readonly queue: Queued[] = [];
  /** One job at a time: when the worker must be ended, the job it was running is known. */
  private running: Running | undefined;
  private seq = 0;
  private closed = false;

  constructor(private readonly budgetMs: number) {}

  run(job: SchemaJob): Promise<SchemaOutcome> {
    if (this.closed) return Promise.resolve(CLOSED);
    return new Promise((resolve) => {
      this.queue.push({ job, resolve });
      this.next();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = this.running;
    this.running = undefined;
    if (running !== undefined) {
      clearTimeout(running.timer);
      running.item.resolve(CLOSED);
    }
    for (const item of this.queue.splice(0)) item.resolve(CLOSED);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private next(): void {
    if (this.running !== undefined || this.closed) return;
    if (this.queue.length === 0) return;
    const worker = this.ensureWorker();
    if (!this.ready) return; // next() runs again once it is
    const item = this.queue.shift()!;
    const seq = ++this.seq;
    const timer = setTimeout(() => this.fail(worker, `took longer than ${this.budgetMs / 1000} s`), this.budgetMs);
    this.running = { seq, item, worker, timer };
    const request: SchemaJobRequest = { seq, ...item.job };
    worker.postMessage(request);
  }

  private message(worker: Worker, message: SchemaWorkerMessage): void {
    if (message === SCHEMA_WORKER_READY) {
      if (this.worker !== worker) return;
      this.ready = true;
      this.next();
      return;
    }
    const running = this.running;
    if (running === undefined || running.worker !== worker || running.seq !== message.seq) return;
    clearTimeout(running.timer);
    this.running = undefined;
    running.item.resolve({ ok: true, problem: message.problem });
    this.next();
  }

  /** The running job on `worker` cannot finish: end the worker with it and go on with the queue on a fresh one. */
  private fail(worker: Worker, why: string): void {
    if (this.worker !== worker) return; // already replaced
    const started = this.ready;
    this.worker = undefined;
    this.ready = false;
    void worker.terminate();
    if (!started) {
      // It never got as far as loading: a fresh one would not either. Nothing was sent to it.
      for (const item of this.queue.splice(0)) item.resolve({ ok: false, why: `was not run: the schema worker could not start (${why})` });
      return;
    }
    const running = this.running;
    if (running === undefined || running.worker !== worker) return;
    clearTimeout(running.timer);
    this.running = undefined;
    running.item.resolve({ ok: false, why });
    this.next();
  }

  private ensureWorker(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(WORKER_FILE, { resourceLimits: WORKER_LIMITS });
    // It does not keep the process alive: requests waiting on it do, and the router's close() ends it.
    worker.unref();
    worker.on('message', (message: SchemaWorkerMessage) => this.message(worker, message));
    worker.on('error', (error) => this.fail(worker, `failed (${error.message.slice(0, 200)})`));
    worker.on('exit', (code) => this.fail(worker, `ended (exit code ${code})`));
    this.worker = worker;
    this.ready = false;
    return worker;
  }
}

const CLOSED: SchemaOutcome = Object.freeze({ ok: false, why: 'was not run: the router is closed' });
