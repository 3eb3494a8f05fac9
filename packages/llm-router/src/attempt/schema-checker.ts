/**
 * Where response schemas are compiled and answers checked against them: a
 * small pool of worker threads (schema-worker-pool.ts), shared fairly between
 * callers, each job within a time budget.
 *
 * Why not the event loop: Ajv turns a schema into JavaScript, which V8 then
 * compiles, and a client chooses the schema. For a large one that is a second
 * or more of CPU (a 140 KB schema: ~3 s; 1,000 subschemas: 0.2–1 s; 900
 * patterns like `[\s\S]{900}`: ~1 s here); five in parallel stalled every
 * other request, `/healthz` included, for 5–12 s. On a worker such a job
 * delays only the schema jobs that wait for that worker, and past its budget
 * the worker is ended with it and a fresh one takes the next.
 *
 * Why fair: with one worker and one queue, six such requests of one client
 * delayed another client's trivial schema by 4.7–7.4 s. Jobs now wait in a
 * queue per caller, taken in turn, and one caller never holds every worker.
 *
 * From the TypeScript sources (tests) there is no built worker: jobs then run
 * in place, on the caller's thread, without a budget or a queue.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { CancelSignal } from '../types.js';
import type { QueueFull } from './fair-queue.js';
import { runSchemaJob, type SchemaJob } from './schema-job.js';
import { SCHEMA_WORKER_FILE, WorkerSchemaChecker } from './schema-worker-pool.js';

/**
 * How long one job may take on a worker before it is ended (with the worker).
 * Kept at 2 s: the largest legitimate schemas within the size bounds compile
 * in 0.2–1 s here, and a loaded machine doubles that; the fairness bound
 * below is stated in this budget, so a tighter one would buy little.
 */
export const SCHEMA_JOB_BUDGET_MS = 2_000; // 2 s

/** Most jobs one caller may have waiting (not yet running); past it, its next schema is refused (`schema_checks_busy`). */
export const SCHEMA_QUEUE_PER_CALLER = 32;
/** Most jobs waiting over all callers; past it, every caller's next schema is refused. */
export const SCHEMA_QUEUE_TOTAL = 256;
/** The most schema workers the default starts (each is a thread with its own compiled schemas). */
export const SCHEMA_WORKERS_MAX_DEFAULT = 4;

/**
 * The default number of schema workers: a core for the event loop, the rest
 * up to 4, and never fewer than 2. Two even on a one- or two-core machine
 * because a caller runs at most `workers − 1` jobs at a time: the second
 * worker is what lets another caller's check start at once while one caller
 * keeps a worker busy (the OS shares the cores between them), and one caller
 * still burns at most one core, as with a single worker. Started when first needed.
 */
export function defaultSchemaWorkers(): number {
  return Math.max(2, Math.min(availableParallelism() - 1, SCHEMA_WORKERS_MAX_DEFAULT));
}

export interface SchemaCheckerOptions {
  /** Per job; default SCHEMA_JOB_BUDGET_MS. */
  readonly budgetMs?: number;
  /** Worker threads; default `defaultSchemaWorkers()`. */
  readonly workers?: number;
  /** Default SCHEMA_QUEUE_PER_CALLER. */
  readonly maxQueuedPerCaller?: number;
  /** Default SCHEMA_QUEUE_TOTAL. */
  readonly maxQueued?: number;
}

/** Who a job is for: its fair share is the caller's, and it leaves the queue when the signal fires. */
export interface SchemaJobOwner {
  /** Whose share the job uses (a service key's id, a client address); jobs without one share one anonymous caller. */
  readonly caller?: string | undefined;
  readonly signal?: CancelSignal | undefined;
}

/**
 * `ok`: the job ran (`problem` as in SchemaJobReply). Otherwise `why` it did not
 * finish (e.g. `took longer than 2 s`), and `busy` when it was refused because
 * a queue is at its bound (never for a `check`: see schema-worker-pool.ts).
 */
export type SchemaOutcome =
  | { readonly ok: true; readonly problem: string | undefined }
  | { readonly ok: false; readonly why: string; readonly busy?: QueueFull };

export interface SchemaChecker {
  run(job: SchemaJob, owner?: SchemaJobOwner): Promise<SchemaOutcome>;
  /** Ends the workers; jobs still waiting, and later ones, end as not finished. */
  close(): Promise<void>;
}

/** A checker on the built workers when there are some (the package's `dist/`), else one that runs jobs in place. */
export function createSchemaChecker(options: SchemaCheckerOptions = {}): SchemaChecker {
  if (!existsSync(fileURLToPath(SCHEMA_WORKER_FILE))) return IN_PLACE;
  return new WorkerSchemaChecker({
    budgetMs: options.budgetMs ?? SCHEMA_JOB_BUDGET_MS,
    workers: options.workers ?? defaultSchemaWorkers(),
    queue: { perCaller: options.maxQueuedPerCaller ?? SCHEMA_QUEUE_PER_CALLER, total: options.maxQueued ?? SCHEMA_QUEUE_TOTAL },
  });
}

const IN_PLACE: SchemaChecker = {
  run: (job) => Promise.resolve({ ok: true, problem: runSchemaJob(job) }),
  close: () => Promise.resolve(),
};
