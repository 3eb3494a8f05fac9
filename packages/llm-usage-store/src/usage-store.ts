/**
 * The usage store: one interface over an embedded SQLite file or PostgreSQL,
 * its connection opened on first use and again after it broke
 * (lazy-connection.ts). Service keys have a store of their own (key-store.ts).
 */
import { sql } from 'kysely';
import {
  addConfigVersion,
  findConfigVersion,
  listConfigVersions,
  type ConfigVersionInput,
  type ConfigVersionPage,
  type ConfigVersionWithPredecessor,
} from './config-versions.js';
import type { ConnectionRole, StoreLocation } from './connections.js';
import { LazyConnection } from './lazy-connection.js';
import { USAGE_MIGRATIONS } from './migrations.js';
import { pruneBefore, refreshStatistics } from './prune.js';
import { queryRequests } from './query-requests.js';
import { querySummary } from './query-summary.js';
import type { UsageDatabase } from './schema.js';
import type { RequestPage, RequestPageQuery, SummaryQuery, SummaryRow } from './types.js';
import { isUsageQueryError } from './usage-query-error.js';
import type { RecordBatch } from './record-block.js';
import { writeRecords } from './write-records.js';

/** Retention and planner statistics: run by the store itself, or handed to its writer thread (`WorkerSink`). */
export interface Housekeeping {
  /** Deletes what is older than `cutoff` (epoch ms, rounded down to the hour); returns the request records deleted. */
  prune(cutoff: number): Promise<number>;
  refreshStatistics(): Promise<void>;
}

export interface UsageStoreOptions {
  readonly location: StoreLocation;
  /** Errors that happen outside any call (an idle PostgreSQL connection dropped). */
  readonly onBackgroundError?: (error: Error) => void;
  /** `writes` for a store that only writes batches (the worker's): a small page cache. Default `queries`. */
  readonly role?: ConnectionRole;
}

export class UsageStore implements Housekeeping {
  readonly kind: StoreLocation['kind'];
  private readonly connection: LazyConnection<UsageDatabase>;

  constructor(options: UsageStoreOptions) {
    this.kind = options.location.kind;
    this.connection = new LazyConnection<UsageDatabase>({
      ...options,
      migrations: USAGE_MIGRATIONS,
      name: 'usage store',
      // A caller's bad query says nothing about the connection; anything else may.
      callerError: isUsageQueryError,
    });
  }

  /** Where the data lives, without credentials (for logs and health). */
  get description(): string {
    return this.connection.description;
  }

  /** Opens the connection and migrates the schema now (otherwise the first call does). */
  async open(): Promise<void> {
    await this.connection.open();
  }

  /** Writes a batch of records (`recordBatch`, or the batch writer's) in one transaction. */
  async write(batch: RecordBatch): Promise<void> {
    await this.connection.run((db, connection) => writeRecords(db, batch, connection.sqlite));
  }

  async requests(query: RequestPageQuery): Promise<RequestPage> {
    return this.connection.run((db) => queryRequests(db, query));
  }

  /** Requests that ended in an error or carry a failed-over attempt, newest first. */
  async errors(query: RequestPageQuery): Promise<RequestPage> {
    return this.connection.run((db) => queryRequests(db, { ...query, errorsOnly: true }));
  }

  async summary(query: SummaryQuery): Promise<SummaryRow[]> {
    return this.connection.run((db) => querySummary(db, query));
  }

  /** Records an applied config unless it is already the newest one; returns whether it was added. */
  async addConfigVersion(input: ConfigVersionInput): Promise<boolean> {
    return this.connection.run((db) => addConfigVersion(db, input));
  }

  /** Applied configs, newest first, without their text. */
  async configVersions(query: { limit?: number; cursor?: string }): Promise<ConfigVersionPage> {
    return this.connection.run((db) => listConfigVersions(db, query));
  }

  /** The newest application of `version` with the config applied before it. */
  async configVersion(version: string): Promise<ConfigVersionWithPredecessor | undefined> {
    return this.connection.run((db) => findConfigVersion(db, version));
  }

  /** Deletes requests older than `cutoff` (epoch ms); returns how many. */
  async prune(cutoff: number): Promise<number> {
    return this.connection.run((db) => pruneBefore(db, cutoff, this.kind));
  }

  /** Refreshes the query planner's statistics (cheap; run after pruning, and after opening). */
  async refreshStatistics(): Promise<void> {
    await this.connection.run((db) => refreshStatistics(db, this.kind));
  }

  /**
   * Makes this store's open connection use statistics another connection (the
   * writer thread's) refreshed: SQLite loads them when a connection opens and
   * when it runs ANALYZE itself, never because another connection did.
   * Reads the statistics tables only.
   */
  async reloadStatistics(): Promise<void> {
    if (this.kind !== 'sqlite') return; // PostgreSQL's planner reads its statistics from the server
    await this.connection.run((db) => sql`ANALYZE sqlite_schema`.execute(db));
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
