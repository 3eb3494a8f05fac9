/**
 * The schema workers and the queue in front of them (see schema-checker.ts for
 * why they exist). The rules, and the bound they give:
 *
 * - Jobs wait in a queue per caller, taken in turn (fair-queue.ts): a job at
 *   the head of its caller's queue waits for at most one job of each caller
 *   ahead of it in the turn order.
 * - A caller runs at most `workers − 1` jobs at a time (one with a single
 *   worker), so one caller, however many requests it sends, never holds every
 *   worker: while only one caller keeps workers busy, another caller's job
 *   starts at once.
 * - A job runs for at most `budgetMs`, then its worker is ended with it.
 *
 * So with W workers and C other callers with jobs waiting, a job waits at
 * most ⌈(C + 1) / W⌉ budgets before it starts, and none at all while C ≤ 1
 * and W ≥ 2.
 *
 * Bounded: a `prepare` (the first job of a request, before any upstream call)
 * is refused when its caller already has `perCaller` jobs waiting or all
 * callers `total`. A `check` is never refused: its request was admitted and
 * its answer paid for; it counts against the bounds, so later prepares are
 * refused while it waits. A job whose request goes away leaves the queue.
 */
import { Worker } from 'node:worker_threads';
import type { CancelSignal } from '../types.js';
import { FairQueue, type FairQueueLimits } from './fair-queue.js';
import type { SchemaChecker, SchemaJobOwner, SchemaOutcome } from './schema-checker.js';
import { SCHEMA_WORKER_READY, type SchemaJob, type SchemaJobRequest, type SchemaWorkerMessage } from './schema-job.js';

export const SCHEMA_WORKER_FILE = new URL('./schema-worker.js', import.meta.url);

/**
 * A bound on what a worker may hold; past it the worker dies and its job fails.
 * Compiled schemas are bounded by their generations (response-schema.ts) far below this.
 */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 512 } as const;

/** The caller of jobs that name none. */
const ANONYMOUS = '';

/** How many recently compiled schemas a worker remembers for preferring it (a hint: its own cache decides). */
const RECENT_SCHEMAS = 16;

export interface PoolOptions {
  readonly budgetMs: number;
  readonly workers: number;
  readonly queue: FairQueueLimits;
}

interface Entry {
  readonly job: SchemaJob;
  readonly caller: string;
  readonly resolve: (outcome: SchemaOutcome) => void;
  readonly signal: CancelSignal | undefined;
  /** Set while the entry waits in the queue and has a signal. */
  onAbort: (() => void) | undefined;
}

/** The job a slot holds: sent (with its budget's timer), or waiting for the slot's worker to be ready. */
interface Held {
  readonly entry: Entry;
  readonly seq: number;
  timer: NodeJS.Timeout | undefined;
}

/** One worker thread's place in the pool; its worker is started with the others when first needed, and replaced when ended. */
class Slot {
  worker: Worker | undefined;
  /** The worker has loaded its modules: a job's budget starts when it is sent, so it must not include that. */
  ready = false;
  held: Held | undefined;
  /** Schemas this slot's worker compiled lately: a job for one of them prefers this slot, where it is cached. */
  readonly recent = new Set<string>();

  remember(schema: string | undefined): void {
    if (schema === undefined) return;
    this.recent.delete(schema);
    this.recent.add(schema);
    if (this.recent.size > RECENT_SCHEMAS) this.recent.delete(this.recent.values().next().value!);
  }
}

export class WorkerSchemaChecker implements SchemaChecker {
  private readonly slots: Slot[];
  private readonly queue: FairQueue<Entry>;
  /** Jobs running (or held by a starting worker), per caller; callers at 0 are absent. */
  private readonly running = new Map<string, number>();
  private readonly perCallerRunning: number;
  private seq = 0;
  private closed = false;

  constructor(private readonly options: PoolOptions) {
    const workers = Math.max(1, Math.floor(options.workers));
    this.slots = Array.from({ length: workers }, () => new Slot());
    this.perCallerRunning = workers === 1 ? 1 : workers - 1;
    this.queue = new FairQueue(options.queue);
  }

  run(job: SchemaJob, owner: SchemaJobOwner = {}): Promise<SchemaOutcome> {
    if (this.closed) return Promise.resolve(CLOSED);
    const signal = owner.signal;
    if (signal?.aborted === true) return Promise.resolve(ABORTED);
    return new Promise((resolve) => {
      const entry: Entry = { job, caller: owner.caller ?? ANONYMOUS, resolve, signal, onAbort: undefined };
      const full = this.queue.push(entry.caller, entry, job.kind === 'check');
      if (full !== undefined) {
        resolve({ ok: false, busy: full, why: full === 'caller' ? 'was not run: this caller has too many schema jobs waiting' : 'was not run: too many schema jobs are waiting' });
        return;
      }
      if (signal !== undefined) {
        entry.onAbort = () => {
          if (this.queue.remove(entry.caller, entry)) resolve(ABORTED);
        };
        signal.addEventListener('abort', entry.onAbort, { once: true });
      }
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const ending: Promise<number>[] = [];
    for (const slot of this.slots) {
      const held = slot.held;
      slot.held = undefined;
      if (held !== undefined) {
        clearTimeout(held.timer);
        held.entry.resolve(CLOSED);
      }
      if (slot.worker !== undefined) ending.push(slot.worker.terminate());
      slot.worker = undefined;
    }
    for (const entry of this.queue.drain()) this.unqueued(entry).resolve(CLOSED);
    this.running.clear();
    await Promise.all(ending);
  }

  /** Gives free slots the next jobs by turn, while there are both. */
  private pump(): void {
    if (this.closed) return;
    for (;;) {
      if (!this.slots.some((slot) => slot.held === undefined)) return;
      const next = this.queue.take((caller) => (this.running.get(caller) ?? 0) < this.perCallerRunning);
      if (next === undefined) return;
      this.assign(this.slotFor(next.item.job), this.unqueued(next.item));
    }
  }

  /** A free slot for `job`: one whose worker compiled its schema lately, else a ready one, else one starting, else one to start. */
  private slotFor(job: SchemaJob): Slot {
    const free = this.slots.filter((slot) => slot.held === undefined);
    return (
      free.find((slot) => slot.ready && job.schema !== undefined && slot.recent.has(job.schema)) ??
      free.find((slot) => slot.ready) ??
      free.find((slot) => slot.worker !== undefined) ??
      free[0]!
    );
  }

  private unqueued(entry: Entry): Entry {
    if (entry.onAbort !== undefined) entry.signal?.removeEventListener('abort', entry.onAbort);
    entry.onAbort = undefined;
    return entry;
  }

  private assign(slot: Slot, entry: Entry): void {
    this.running.set(entry.caller, (this.running.get(entry.caller) ?? 0) + 1);
    slot.held = { entry, seq: ++this.seq, timer: undefined };
    if (slot.worker === undefined) this.startAll();
    else if (slot.ready) this.send(slot);
  }

  private send(slot: Slot): void {
    const held = slot.held!;
    const worker = slot.worker!;
    held.timer = setTimeout(() => this.fail(slot, worker, `took longer than ${this.options.budgetMs / 1000} s`), this.options.budgetMs);
    const request: SchemaJobRequest = { seq: held.seq, ...held.entry.job };
    worker.postMessage(request);
  }

  private message(slot: Slot, worker: Worker, message: SchemaWorkerMessage): void {
    if (slot.worker !== worker) return;
    if (message === SCHEMA_WORKER_READY) {
      slot.ready = true;
      if (slot.held !== undefined) this.send(slot);
      return;
    }
    if (slot.held === undefined || slot.held.seq !== message.seq) return;
    slot.remember(slot.held.entry.job.schema);
    this.finish(slot, { ok: true, problem: message.problem });
  }

  /** The slot's job is over: its caller is told, and the slot takes the next job by turn. */
  private finish(slot: Slot, outcome: SchemaOutcome): void {
    const held = slot.held;
    if (held === undefined) return;
    clearTimeout(held.timer);
    slot.held = undefined;
    const caller = held.entry.caller;
    const left = (this.running.get(caller) ?? 1) - 1;
    if (left > 0) this.running.set(caller, left);
    else this.running.delete(caller);
    held.entry.resolve(outcome);
    this.pump();
  }

  /** The slot's job cannot finish (or its worker ended): end the worker with it; a fresh one takes the slot's next job. */
  private fail(slot: Slot, worker: Worker, why: string): void {
    if (slot.worker !== worker) return; // already replaced
    const started = slot.ready;
    slot.worker = undefined;
    slot.ready = false;
    slot.recent.clear();
    void worker.terminate();
    if (!started) {
      // It never got as far as loading: a fresh one would not either.
      const outcome: SchemaOutcome = { ok: false, why: `was not run: the schema worker could not start (${why})` };
      for (const entry of this.queue.drain()) this.unqueued(entry).resolve(outcome);
      this.finish(slot, outcome);
      return;
    }
    // A fresh worker at once, so that it is ready by the time a job needs this slot.
    if (!this.closed) this.start(slot);
    this.finish(slot, { ok: false, why });
  }

  /**
   * Starts every slot's worker that is not running: all at once, when the first
   * is needed, so that the worker another caller's job goes to is ready by then
   * (a start costs ~0.1–1 s of loading; a schema job, milliseconds).
   */
  private startAll(): void {
    for (const slot of this.slots) if (slot.worker === undefined) this.start(slot);
  }

  private start(slot: Slot): void {
    const worker = new Worker(SCHEMA_WORKER_FILE, { resourceLimits: WORKER_LIMITS });
    // It does not keep the process alive: requests waiting on it do, and the router's close() ends it.
    worker.unref();
    worker.on('message', (message: SchemaWorkerMessage) => this.message(slot, worker, message));
    worker.on('error', (error) => this.fail(slot, worker, `failed (${error.message.slice(0, 200)})`));
    worker.on('exit', (code) => this.fail(slot, worker, `ended (exit code ${code})`));
    slot.worker = worker;
    slot.ready = false;
  }
}

const CLOSED: SchemaOutcome = Object.freeze({ ok: false, why: 'was not run: the router is closed' });
const ABORTED: SchemaOutcome = Object.freeze({ ok: false, why: 'was not run: the request was aborted' });
