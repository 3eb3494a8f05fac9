/**
 * The key store's one table, apart from the usage store's schema: service
 * keys need no usage recording (key-store.ts).
 */
import type { ColumnType } from 'kysely';

/** A bigint column that the drivers hand back as a JS number (epoch ms fit in 2^53). */
type Int = ColumnType<number, number, number>;

/** One service key (@mana/llm-service-keys): its settings and the digests of its secrets. */
export interface ServiceKeysTable {
  /** The key's public id (12 hex digits, part of the key). */
  id: string;
  /** Unique. */
  name: string;
  description: string | null;
  created_at: Int;
  /** Epoch ms of the last admin write (a reconciling replica keeps the newer of two copies). */
  updated_at: Int;
  last_used_at: ColumnType<number | null, number | null, number | null>;
  expires_at: ColumnType<number | null, number | null, number | null>;
  /** 0 or 1. */
  disabled: number;
  /** JSON array of aliases and targets; null: all. */
  aliases: string | null;
  priority: string | null;
  max_concurrency: number | null;
  /** SHA-256 of the current secret, hex. */
  secret_digest: string;
  /** SHA-256 of the secret before the last rotation, while in grace. */
  previous_digest: string | null;
  previous_valid_until: ColumnType<number | null, number | null, number | null>;
}

export interface KeyDatabase {
  service_keys: ServiceKeysTable;
}
