/**
 * The gateway's usage recording: a store (SQLite file under the data folder, or
 * PostgreSQL when MANA_LLM_DATABASE_URL is set), the batch writer in front of it,
 * background retention, and the status `/v1/health` and `/metrics` report.
 * Nothing here runs on a request's path except `record()`, which only queues.
 */
import {
  BatchWriter,
  UsageStore,
  WorkerSink,
  workerAvailable,
  type BatchWriterStatus,
  type ConfigVersionInput,
  type RequestRecord,
} from '@mana/llm-usage-store';
import type { Logger } from '../logging.js';
import { retryWhileLocked } from './retry-while-locked.js';
import { storeLocation } from './store-location.js';

const PRUNE_INTERVAL_MS = 3_600_000; // 1 h
const FIRST_PRUNE_DELAY_MS = 10_000; // 10 s after start: not during start-up

export interface UsageRecorderOptions {
  readonly dataDir: string;
  /** PostgreSQL instead of the embedded file. A secret: never logged as is. */
  readonly databaseUrl: string | undefined;
  /** How long records are kept (ms), asked at every retention run. */
  readonly retentionMs: () => number;
  /** The name written on each record (`--replica-name`, else `<hostname>:<port>`). */
  readonly replica: string;
  readonly logger: Logger;
}

export interface UsageStatus extends BatchWriterStatus {
  readonly store: string;
}

export class UsageRecorder {
  /** For queries (the usage API); writes and retention go through `sink`. */
  readonly store: UsageStore;
  /** Batches are written on a worker thread (the built package), so no write ever runs on the request loop. */
  private readonly sink: WorkerSink | UsageStore;
  private readonly writer: BatchWriter;
  private readonly pruneTimer: NodeJS.Timeout;
  private firstPrune: NodeJS.Timeout | undefined;
  /** The name written on each record. */
  readonly replica: string;
  /** Config versions being written, one after another in the order they were applied. */
  private configWrites: Promise<void> = Promise.resolve();

  constructor(private readonly options: UsageRecorderOptions) {
    const { logger } = options;
    this.replica = options.replica;
    const location = storeLocation(options.dataDir, options.databaseUrl);
    this.store = new UsageStore({
      location,
      onBackgroundError: (error) => logger.warn({ err: { message: error.message } }, 'usage store connection error'),
    });
    let failingSince: number | undefined;
    this.sink = workerAvailable() ? new WorkerSink(location) : this.store;
    this.writer = new BatchWriter(this.sink, {
      onDropped: (dropped) => logger.warn({ dropped }, 'usage events dropped: the usage store cannot keep up or is failing'),
      onWriteError: (error) => {
        // One line when the store starts failing, not one per retry.
        if (failingSince !== undefined) return;
        failingSince = Date.now();
        logger.warn({ store: this.store.description, err: { message: error.message } }, 'usage store write failed; retrying');
      },
      onWritten: () => {
        if (failingSince === undefined) return;
        logger.info({ store: this.store.description, failing_ms: Date.now() - failingSince }, 'usage store writes again');
        failingSince = undefined;
      },
    });
    this.firstPrune = setTimeout(() => void this.prune(), FIRST_PRUNE_DELAY_MS);
    this.firstPrune.unref();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  /** Opens the store now so a bad location shows at start (the gateway starts anyway). */
  async open(): Promise<void> {
    try {
      await this.store.open();
      this.options.logger.info({ store: this.store.description }, 'usage store open');
    } catch (error) {
      this.options.logger.warn({ store: this.store.description, err: { message: (error as Error).message } }, 'usage store unavailable; retrying in the background');
    }
  }

  record(record: RequestRecord): void {
    this.writer.record(record);
  }

  /**
   * Queues an applied config for the history and returns at once: the write
   * runs after the apply, and a failing store only costs a log line.
   */
  recordConfig(input: ConfigVersionInput): void {
    this.configWrites = this.configWrites.then(
      () =>
        retryWhileLocked(() => this.store.addConfigVersion(input)).then(
          () => undefined,
          (error: Error) =>
            this.options.logger.warn({ version: input.version, source: input.source, err: { message: error.message } }, 'config version not recorded in the history'),
        ),
    );
  }

  /** Resolves once every config queued so far is written (or given up on): the history then shows it. */
  configRecorded(): Promise<void> {
    return this.configWrites;
  }

  get status(): UsageStatus {
    return { ...this.writer.status, store: this.store.description };
  }

  /** SIGTERM: write what is queued (bounded), then close the store. */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.pruneTimer);
    clearTimeout(this.firstPrune);
    await this.writer.close(timeoutMs);
    await this.configWrites;
    if (this.sink !== this.store) await this.sink.close();
    await this.store.close();
  }

  private async prune(): Promise<void> {
    try {
      // On the writer thread when there is one: a first statistics refresh of a large
      // file reads it for hundreds of milliseconds, which on this thread would stall every request.
      const deleted = await this.sink.prune(Date.now() - this.options.retentionMs());
      await this.sink.refreshStatistics();
      // The query connection's planner. `ANALYZE sqlite_schema` takes the write lock, so it meets
      // the writer thread's batches (under steady traffic, e.g. 200 refused keys a second, often):
      // retried like the other writes of this connection instead of failing the run.
      if (this.sink !== this.store) await retryWhileLocked(() => this.store.reloadStatistics());
      if (deleted > 0) this.options.logger.info({ deleted }, 'usage records past retention deleted');
    } catch (error) {
      this.options.logger.warn({ err: { message: (error as Error).message } }, 'usage retention run failed');
    }
  }
}
