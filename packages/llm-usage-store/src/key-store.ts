/**
 * Service keys at rest, apart from usage recording: the key store opens its
 * own connection to the same database (the SQLite file or PostgreSQL the
 * usage store would use) and runs only its own migrations (key-migrations.ts),
 * so a gateway with `--usage off` stores keys too, and keys stored while usage
 * was recorded are found again without it.
 */
import type { StoredServiceKey } from '@mana/llm-service-keys';
import type { StoreLocation } from './connections.js';
import type { KeyDatabase } from './key-schema.js';
import { KEY_MIGRATIONS } from './key-migrations.js';
import { LazyConnection } from './lazy-connection.js';
import {
  createServiceKey,
  deleteServiceKey,
  getServiceKey,
  listServiceKeys,
  touchServiceKeys,
  updateServiceKey,
  type KeyWriteOptions,
  type ServiceKeyWrite,
} from './service-keys.js';

export interface KeyStoreOptions {
  readonly location: StoreLocation;
  /** Errors that happen outside any call (an idle PostgreSQL connection dropped). */
  readonly onBackgroundError?: (error: Error) => void;
}

export class ServiceKeyStore {
  readonly kind: StoreLocation['kind'];
  private readonly connection: LazyConnection<KeyDatabase>;
  /** PostgreSQL announces each key write to the other replicas (SERVICE_KEYS_CHANNEL). */
  private readonly writes: KeyWriteOptions;

  constructor(options: KeyStoreOptions) {
    this.kind = options.location.kind;
    this.writes = { announce: this.kind === 'postgres' };
    this.connection = new LazyConnection<KeyDatabase>({ ...options, migrations: KEY_MIGRATIONS, name: 'key store' });
  }

  /** Where the keys live, without credentials (for logs). */
  get description(): string {
    return this.connection.description;
  }

  /** Every service key (digests, never secrets), oldest first. */
  async serviceKeys(): Promise<StoredServiceKey[]> {
    return this.connection.run((db) => listServiceKeys(db));
  }

  async serviceKey(id: string): Promise<StoredServiceKey | undefined> {
    return this.connection.run((db) => getServiceKey(db, id));
  }

  /** Stores a new key (one transaction) unless another key holds its name. */
  async createServiceKey(key: StoredServiceKey): Promise<ServiceKeyWrite> {
    return this.connection.run((db) => createServiceKey(db, key, this.writes));
  }

  /** Changes key `id` as `change` computes from the stored key (one transaction; a throw writes nothing). Also rotations. */
  async updateServiceKey(id: string, change: (current: StoredServiceKey) => StoredServiceKey, now: number = Date.now()): Promise<ServiceKeyWrite> {
    return this.connection.run((db) => updateServiceKey(db, id, change, now, this.writes));
  }

  async deleteServiceKey(id: string): Promise<boolean> {
    return this.connection.run((db) => deleteServiceKey(db, id, this.writes));
  }

  /** Raises each key's `last_used_at` to the time given (never lowers it). */
  async touchServiceKeys(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    await this.connection.run((db) => touchServiceKeys(db, lastUsed));
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
