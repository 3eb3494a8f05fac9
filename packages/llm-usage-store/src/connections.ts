/**
 * Opening the two engines behind one kysely handle. A connection is opened
 * lazily and again after a failure, so a database that is down, locked or
 * deleted at one moment is picked up again by the next write without a restart.
 */
import { statSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type MigrationProvider } from 'kysely';
import pg from 'pg';
import { USAGE_MIGRATIONS } from './migrations.js';
import type { UsageDatabase } from './schema.js';

/**
 * The migrations one owner of tables runs when it opens a connection, and the
 * tables kysely keeps their record in. Two owners on one database (the usage
 * store and the key store) each have their own record, so each can open
 * without the other.
 */
export interface MigrationSet {
  readonly provider: MigrationProvider;
  readonly table: string;
  readonly lockTable: string;
}

export type StoreLocation =
  | { readonly kind: 'sqlite'; readonly file: string }
  | { readonly kind: 'postgres'; readonly url: string };

export interface Connection<Database = UsageDatabase> {
  readonly db: Kysely<Database>;
  /** The better-sqlite3 handle behind `db` (SQLite only): the batch insert runs prepared statements on it. */
  readonly sqlite?: BetterSqlite3.Database;
  /** False when the connection can no longer reach the data (e.g. the SQLite file was removed). */
  stillValid(): boolean;
  close(): Promise<void>;
}

/**
 * Page cache per connection, at most. Queries read the recent part of the
 * indexes and sort percentiles in memory: 32 MB. The writer's connection only
 * appends (row ids, times and rollup keys grow), so the pages it touches are the
 * rightmost path of each B-tree: SQLite's default 2 MB holds them, and the 30 MB
 * more it would fill with pages written once and never read again are resident
 * memory of the gateway process.
 */
const SQLITE_CACHE_KIB = { queries: 32_768, writes: 2_048 } as const;

/** Bytes per page of a new SQLite file (see `openSqlite`). */
export const SQLITE_PAGE_SIZE = 16_384;

/** What a connection is for: sizes its cache. */
export type ConnectionRole = keyof typeof SQLITE_CACHE_KIB;
const POSTGRES_POOL_SIZE = 4;
const POSTGRES_CONNECT_TIMEOUT_MS = 2_000; // 2 s: a stopped server is noticed quickly
const POSTGRES_STATEMENT_TIMEOUT_MS = 10_000; // 10 s: no query holds a pooled connection longer
const POSTGRES_IDLE_TIMEOUT_MS = 10_000; // 10 s

/** PostgreSQL OIDs whose text form we read as JS numbers: int8 (count, sum of integers, epoch ms) and numeric. */
const INT8_OID = 20;
const NUMERIC_OID = 1700;

export async function openConnection<Database = UsageDatabase>(
  location: StoreLocation,
  onBackgroundError: (error: Error) => void,
  role: ConnectionRole = 'queries',
  migrations: MigrationSet = USAGE_MIGRATIONS,
): Promise<Connection<Database>> {
  const connection = location.kind === 'sqlite' ? openSqlite<Database>(location.file, role) : openPostgres<Database>(location.url, onBackgroundError);
  try {
    const migrator = new Migrator({
      db: connection.db,
      provider: migrations.provider,
      migrationTableName: migrations.table,
      migrationLockTableName: migrations.lockTable,
      allowUnorderedMigrations: true,
    });
    const { error } = await migrator.migrateToLatest();
    if (error !== undefined) throw error instanceof Error ? error : new Error(String(error));
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
  return connection;
}

function openSqlite<Database>(file: string, role: ConnectionRole): Connection<Database> {
  mkdirSync(dirname(file), { recursive: true });
  const database = new BetterSqlite3(file);
  try {
    // Set before anything is written, so it takes effect only in a new file
    // (an existing one keeps its size: WAL mode cannot change it). Rows are
    // appended a batch at a time, and with 16 KiB pages SQLite handles a
    // quarter as many pages per batch: writing a request cost 15 % less CPU
    // than with the default 4 KiB (bench/README.md, fourth pass).
    database.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
    // WAL: readers (the usage API) never wait for the writer, and a killed
    // process loses no committed batch. NORMAL sync is durable across a process
    // crash (only an OS crash may lose the last commits).
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    // better-sqlite3 is synchronous: waiting for a lock would block the event
    // loop, i.e. every request. Fail at once instead; the writer retries later.
    database.pragma('busy_timeout = 0');
    database.pragma(`cache_size = -${SQLITE_CACHE_KIB[role]}`);
    database.pragma('temp_store = MEMORY');
  } catch (error) {
    database.close();
    throw error;
  }
  const inode = statSync(file).ino;
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  return {
    db,
    sqlite: database,
    stillValid() {
      // An unlinked or replaced file keeps accepting writes into the old inode,
      // which nobody will ever read: treat that as a broken connection.
      try {
        return statSync(file).ino === inode;
      } catch {
        return false;
      }
    },
    close: () => db.destroy(),
  };
}

function openPostgres<Database>(url: string, onBackgroundError: (error: Error) => void): Connection<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: POSTGRES_POOL_SIZE,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: POSTGRES_IDLE_TIMEOUT_MS,
    statement_timeout: POSTGRES_STATEMENT_TIMEOUT_MS,
    query_timeout: POSTGRES_STATEMENT_TIMEOUT_MS,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID || oid === NUMERIC_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle pooled client whose server goes away emits 'error' on the pool;
  // unhandled, that would crash the process. The next query reconnects.
  pool.on('error', onBackgroundError);
  // A checked-out client has no pool listener: when the server goes away while
  // it is lent out (a query running, a transaction between two statements) it
  // emits 'error' itself, and without a listener that ends the process (a
  // fast shutdown sends 57P01 to every backend at once). Nothing is lost by
  // ignoring it here: the query in flight, or the next one, fails with it, and
  // the pool drops the client when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, stillValid: () => true, close: () => db.destroy() };
}
