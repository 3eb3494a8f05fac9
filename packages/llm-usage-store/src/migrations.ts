/**
 * Versioned schema migrations, run at open by kysely's Migrator (it keeps the
 * applied versions in `kysely_migration` and holds a lock while migrating, so
 * several replicas starting at once against one PostgreSQL apply each once).
 * Append new versions; never edit an applied one.
 */
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { MigrationSet } from './connections.js';
import { backfillKeyRollups, backfillRollups } from './rollups.js';
import type { UsageDatabase } from './schema.js';

const migrations: Record<string, Migration> = {
  '0001_usage_events': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('usage_requests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('ts', 'bigint', (c) => c.notNull())
        .addColumn('key_fingerprint', 'text')
        .addColumn('alias', 'text')
        .addColumn('model', 'text')
        .addColumn('target', 'text')
        .addColumn('provider', 'text')
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('code', 'text')
        .addColumn('stream', 'integer', (c) => c.notNull())
        .addColumn('priority', 'text')
        .addColumn('attempt_count', 'integer', (c) => c.notNull())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('duration_ms', 'double precision', (c) => c.notNull())
        .addColumn('ttfb_ms', 'double precision')
        .addColumn('prompt_tokens', 'integer')
        .addColumn('completion_tokens', 'integer')
        .addColumn('cached_tokens', 'integer')
        .addColumn('cost_usd', 'double precision')
        .addColumn('failovers', 'integer', (c) => c.notNull())
        .addColumn('rescued', 'integer', (c) => c.notNull())
        .addColumn('flagged', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('usage_requests_ts').on('usage_requests').columns(['ts', 'id']).execute();
      await db.schema.createIndex('usage_requests_alias_ts').on('usage_requests').columns(['alias', 'ts']).execute();
      await db.schema.createIndex('usage_requests_target_ts').on('usage_requests').columns(['target', 'ts']).execute();
      await db.schema.createIndex('usage_requests_flagged_ts').on('usage_requests').columns(['flagged', 'ts', 'id']).execute();
      await db.schema.createIndex('usage_requests_request_id').on('usage_requests').column('request_id').execute();

      await db.schema
        .createTable('usage_attempts')
        .addColumn('request_row_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('ts', 'bigint', (c) => c.notNull())
        .addColumn('alias', 'text')
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('upstream_status', 'integer')
        .addColumn('duration_ms', 'double precision', (c) => c.notNull())
        .addColumn('prompt_tokens', 'integer')
        .addColumn('completion_tokens', 'integer')
        .addColumn('cached_tokens', 'integer')
        .addColumn('cost_usd', 'double precision')
        .addColumn('failed_over', 'integer', (c) => c.notNull())
        .addColumn('final', 'integer', (c) => c.notNull())
        .addColumn('rescue', 'integer', (c) => c.notNull())
        .addColumn('ttfb_ms', 'double precision')
        .addPrimaryKeyConstraint('usage_attempts_pk', ['request_row_id', 'position'])
        .execute();
      await db.schema.createIndex('usage_attempts_ts').on('usage_attempts').column('ts').execute();
      await db.schema.createIndex('usage_attempts_target_ts').on('usage_attempts').columns(['target', 'ts']).execute();
      await db.schema.createIndex('usage_attempts_provider_ts').on('usage_attempts').columns(['provider', 'ts']).execute();
    },
  },
  '0002_config_versions': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Every config the gateway applied, with its full text (for rollback).
      await db.schema
        .createTable('config_versions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('ts', 'bigint', (c) => c.notNull())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('config_versions_ts').on('config_versions').columns(['ts', 'id']).execute();
      await db.schema.createIndex('config_versions_version').on('config_versions').columns(['version', 'ts']).execute();
    },
  },
  '0003_lean_indexes': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Every index is paid for on every insert. Nothing looks requests up by
      // request_id; the summary's per-target and per-provider scans move to the
      // rollups (0004), whose edges need only the attempts' time index; and the
      // errors view needs only the flagged rows in its index (a few percent).
      await db.schema.dropIndex('usage_requests_request_id').execute();
      await db.schema.dropIndex('usage_attempts_target_ts').execute();
      await db.schema.dropIndex('usage_attempts_provider_ts').execute();
      await db.schema.dropIndex('usage_requests_flagged_ts').execute();
      await db.schema
        .createIndex('usage_requests_flagged_ts')
        .on('usage_requests')
        .columns(['ts', 'id'])
        .where(sql.ref('flagged'), '=', 1)
        .execute();
    },
  },
  '0004_usage_rollups': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('usage_rollups')
        .addColumn('dim', 'text', (c) => c.notNull())
        .addColumn('span_ms', 'integer', (c) => c.notNull())
        .addColumn('bucket', 'bigint', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('errors', 'bigint', (c) => c.notNull())
        .addColumn('rescued', 'bigint', (c) => c.notNull())
        .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
        .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cost_usd', 'double precision')
        .addColumn('durations', 'text', (c) => c.notNull())
        .addColumn('ttfbs', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('usage_rollups_pk', ['dim', 'span_ms', 'bucket', 'key'])
        .execute();
      await backfillRollups(db as Kysely<UsageDatabase>);
    },
  },
  // 0005–0009 are reserved for the usage store; 0010 on for several replicas.
  '0010_replica_name': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Several replicas write one PostgreSQL: each request names the one that served it.
      await db.schema.alterTable('usage_requests').addColumn('replica', 'text').execute();
    },
  },
  '0011_shared_health': {
    async up(db: Kysely<unknown>): Promise<void> {
      // The newest health transition per provider (`provider:<name>`) or target (`target:<id>`):
      // one row each, so the table stays as small as the config and a full read is cheap.
      await db.schema
        .createTable('health_transitions')
        .addColumn('subject', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('until', 'bigint')
        .addColumn('reason', 'text')
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('replica', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0012_shared_config': {
    async up(db: Kysely<unknown>): Promise<void> {
      // The config all replicas serve (one row, id 1); each write also lands in config_versions.
      await db.schema
        .createTable('shared_config')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('ts', 'bigint', (c) => c.notNull())
        .addColumn('replica', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0013_attempts_in_request_row': {
    async up(db: Kysely<unknown>): Promise<void> {
      // New requests keep their attempts in their own row (stored-attempts.ts);
      // usage_attempts keeps those of older rows until retention removes them.
      await db.schema.alterTable('usage_requests').addColumn('attempts', 'text').execute();
    },
  },
  '0014_inbound_api': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Which inbound API a request came through (chat completions, embeddings, messages, …).
      await db.schema.alterTable('usage_requests').addColumn('api', 'text').execute();
    },
  },
  '0015_trace_id': {
    async up(db: Kysely<unknown>): Promise<void> {
      // The OpenTelemetry trace a request's spans belong to, while tracing is on. Not indexed:
      // nothing looks requests up by it, and every index is paid for on every insert.
      await db.schema.alterTable('usage_requests').addColumn('trace_id', 'text').execute();
    },
  },
  '0016_key_identity': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Who called: the key's public id and name (never its secret), for attribution and `group_by=key`.
      await db.schema.alterTable('usage_requests').addColumn('key_id', 'text').execute();
      await db.schema.alterTable('usage_requests').addColumn('key_name', 'text').execute();
      // The `key` filter of the usage API, as alias and target have theirs (0001); names are not filtered on.
      await db.schema.createIndex('usage_requests_key_id_ts').on('usage_requests').columns(['key_id', 'ts']).execute();
      // The summary by key reads rollups (rollups.ts): those of the rows already stored, none of which has a key.
      await backfillKeyRollups(db as Kysely<UsageDatabase>);
    },
  },
  '0017_service_keys': {
    async up(): Promise<void> {
      // The service_keys table moved to the key store's own migrations
      // (key-migrations.ts), so keys work without usage recording. A database
      // migrated before keeps the table this step made; the key store's first
      // step makes it only where it is missing.
    },
  },
  '0018_hedge': {
    async up(db: Kysely<unknown>): Promise<void> {
      // How `hedge_after` went for the request (null: not in force). Not indexed: read with its row only.
      await db.schema.alterTable('usage_requests').addColumn('hedge', 'text').execute();
    },
  },
  '0019_replicas': {
    async up(db: Kysely<unknown>): Promise<void> {
      // The replicas alive (@mana/llm-shared-state's membership): one row each, its heartbeat in
      // `last_seen` (the database's clock, so replicas' clocks need not agree). Capacities are split by it.
      await db.schema
        .createTable('replicas')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};

/** The usage store's migrations, recorded in kysely's default tables (as since the first release). */
export const USAGE_MIGRATIONS: MigrationSet = { provider: migrationProvider, table: DEFAULT_MIGRATION_TABLE, lockTable: DEFAULT_MIGRATION_LOCK_TABLE };

/** The newest schema version this code knows. */
export const LATEST_SCHEMA_VERSION = Object.keys(migrations).at(-1)!;
