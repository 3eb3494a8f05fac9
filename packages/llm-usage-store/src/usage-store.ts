/**
 * The usage store: one interface over an embedded SQLite file or PostgreSQL.
 * The connection is opened (and the schema migrated) on first use and opened
 * again after it broke, so the store recovers by itself from a database that
 * was down, locked or deleted.
 */
import { sql, type Kysely } from 'kysely';
import {
  addConfigVersion,
  findConfigVersion,
  listConfigVersions,
  type ConfigVersionInput,
  type ConfigVersionPage,
  type ConfigVersionWithPredecessor,
} from './config-versions.js';
import { openConnection, type Connection, type ConnectionRole, type StoreLocation } from './connections.js';
import { pruneBefore, refreshStatistics } from './prune.js';
import { queryRequests } from './query-requests.js';
import { querySummary } from './query-summary.js';
import type { UsageDatabase } from './schema.js';
import type { RequestPage, RequestPageQuery, SummaryQuery, SummaryRow } from './types.js';
import { isUsageQueryError } from './usage-query-error.js';
import type { RecordBatch } from './record-block.js';
import {
  createServiceKey,
  deleteServiceKey,
  getServiceKey,
  listServiceKeys,
  touchServiceKeys,
  updateServiceKey,
  type ServiceKeyWrite,
} from './service-keys.js';
import type { StoredServiceKey } from '@mana/llm-service-keys';
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
  private connection: Promise<Connection> | undefined;
  private closed = false;

  constructor(private readonly options: UsageStoreOptions) {
    this.kind = options.location.kind;
  }

  /** Where the data lives, without credentials (for logs and health). */
  get description(): string {
    const { location } = this.options;
    if (location.kind === 'sqlite') return `sqlite:${location.file}`;
    try {
      const url = new URL(location.url);
      return `postgres://${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
    } catch {
      return 'postgres';
    }
  }

  /** Opens the connection and migrates the schema now (otherwise the first call does). */
  async open(): Promise<void> {
    await this.connect();
  }

  /** Writes a batch of records (`recordBatch`, or the batch writer's) in one transaction. */
  async write(batch: RecordBatch): Promise<void> {
    await this.run((db, connection) => writeRecords(db, batch, connection.sqlite));
  }

  async requests(query: RequestPageQuery): Promise<RequestPage> {
    return this.run((db) => queryRequests(db, query));
  }

  /** Requests that ended in an error or carry a failed-over attempt, newest first. */
  async errors(query: RequestPageQuery): Promise<RequestPage> {
    return this.run((db) => queryRequests(db, { ...query, errorsOnly: true }));
  }

  async summary(query: SummaryQuery): Promise<SummaryRow[]> {
    return this.run((db) => querySummary(db, query));
  }

  /** Records an applied config unless it is already the newest one; returns whether it was added. */
  async addConfigVersion(input: ConfigVersionInput): Promise<boolean> {
    return this.run((db) => addConfigVersion(db, input));
  }

  /** Applied configs, newest first, without their text. */
  async configVersions(query: { limit?: number; cursor?: string }): Promise<ConfigVersionPage> {
    return this.run((db) => listConfigVersions(db, query));
  }

  /** The newest application of `version` with the config applied before it. */
  async configVersion(version: string): Promise<ConfigVersionWithPredecessor | undefined> {
    return this.run((db) => findConfigVersion(db, version));
  }

  /** PostgreSQL announces each key write to the other replicas (SERVICE_KEYS_CHANNEL). */
  private get keyWrites(): { announce: boolean } {
    return { announce: this.kind === 'postgres' };
  }

  /** Every service key (digests, never secrets), oldest first. */
  async serviceKeys(): Promise<StoredServiceKey[]> {
    return this.run((db) => listServiceKeys(db));
  }

  async serviceKey(id: string): Promise<StoredServiceKey | undefined> {
    return this.run((db) => getServiceKey(db, id));
  }

  /** Stores a new key (one transaction) unless another key holds its name. */
  async createServiceKey(key: StoredServiceKey): Promise<ServiceKeyWrite> {
    return this.run((db) => createServiceKey(db, key, this.keyWrites));
  }

  /** Changes key `id` as `change` computes from the stored key (one transaction; a throw writes nothing). Also rotations. */
  async updateServiceKey(id: string, change: (current: StoredServiceKey) => StoredServiceKey, now: number = Date.now()): Promise<ServiceKeyWrite> {
    return this.run((db) => updateServiceKey(db, id, change, now, this.keyWrites));
  }

  async deleteServiceKey(id: string): Promise<boolean> {
    return this.run((db) => deleteServiceKey(db, id, this.keyWrites));
  }

  /** Raises each key's `last_used_at` to the time given (never lowers it). */
  async touchServiceKeys(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    await this.run((db) => touchServiceKeys(db, lastUsed));
  }

  /** Deletes requests older than `cutoff` (epoch ms); returns how many. */
  async prune(cutoff: number): Promise<number> {
    return this.run((db) => pruneBefore(db, cutoff, this.kind));
  }

  /** Refreshes the query planner's statistics (cheap; run after pruning, and after opening). */
  async refreshStatistics(): Promise<void> {
    await this.run((db) => refreshStatistics(db, this.kind));
  }

  /**
   * Makes this store's open connection use statistics another connection (the
   * writer thread's) refreshed: SQLite loads them when a connection opens and
   * when it runs ANALYZE itself, never because another connection did.
   * Reads the statistics tables only.
   */
  async reloadStatistics(): Promise<void> {
    if (this.kind !== 'sqlite') return; // PostgreSQL's planner reads its statistics from the server
    await this.run((db) => sql`ANALYZE sqlite_schema`.execute(db));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.drop();
  }

  private async run<T>(work: (db: Kysely<UsageDatabase>, connection: Connection) => Promise<T>): Promise<T> {
    const connection = await this.connect();
    try {
      return await work(connection.db, connection);
    } catch (error) {
      // A caller's bad query says nothing about the connection; anything else may.
      // Only the connection this work used: another call may have opened a new one meanwhile.
      if (!isUsageQueryError(error) && this.kind === 'sqlite') await this.drop(connection);
      throw error;
    }
  }

  private async connect(): Promise<Connection> {
    if (this.closed) throw new Error('The usage store is closed.');
    if (this.connection !== undefined) {
      const current = await this.connection.catch(() => undefined);
      if (current !== undefined && current.stillValid()) return current;
      await this.drop();
    }
    const opening = openConnection(this.options.location, (error) => this.options.onBackgroundError?.(error), this.options.role);
    this.connection = opening;
    try {
      return await opening;
    } catch (error) {
      if (this.connection === opening) this.connection = undefined;
      throw error;
    }
  }

  /** Closes the current connection, or only `used` if that is still the current one. */
  private async drop(used?: Connection): Promise<void> {
    const current = this.connection;
    if (current === undefined) return;
    const connection = await current.catch(() => undefined);
    if (used !== undefined && connection !== used) return;
    if (this.connection === current) this.connection = undefined;
    await connection?.close().catch(() => undefined);
  }
}
