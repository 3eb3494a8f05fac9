/**
 * The key store's migrations, recorded apart from the usage store's (in
 * `service_keys_migration`), so a gateway without usage recording opens the
 * keys alone. Append new versions; never edit an applied one.
 */
import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { MigrationSet } from './connections.js';

const migrations: Record<string, Migration> = {
  '0001_service_keys': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Settings and SHA-256 digests of the secrets, never a secret. `if not exists`: a database
      // the usage store migrated before (its step 0017) has the table already, keys in it.
      await db.schema
        .createTable('service_keys')
        .ifNotExists()
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('description', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('expires_at', 'bigint')
        .addColumn('disabled', 'integer', (c) => c.notNull())
        .addColumn('aliases', 'text')
        .addColumn('priority', 'text')
        .addColumn('max_concurrency', 'integer')
        .addColumn('secret_digest', 'text', (c) => c.notNull())
        .addColumn('previous_digest', 'text')
        .addColumn('previous_valid_until', 'bigint')
        .execute();
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export const KEY_MIGRATIONS: MigrationSet = { provider, table: 'service_keys_migration', lockTable: 'service_keys_migration_lock' };
