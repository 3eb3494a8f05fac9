/**
 * A connection opened (and its schema migrated) on first use and opened again
 * after it broke, so a store recovers by itself from a database that was
 * down, locked or deleted. The usage store and the key store each hold one.
 */
import type { Kysely } from 'kysely';
import { openConnection, type Connection, type ConnectionRole, type MigrationSet, type StoreLocation } from './connections.js';

export interface LazyConnectionOptions {
  readonly location: StoreLocation;
  readonly migrations: MigrationSet;
  /** Names the store in the error a call after `close()` gets. */
  readonly name: string;
  /** Errors that happen outside any call (an idle PostgreSQL connection dropped). */
  readonly onBackgroundError?: ((error: Error) => void) | undefined;
  readonly role?: ConnectionRole | undefined;
  /** An error that says nothing about the connection (a caller's bad query): it is kept. Default: none is. */
  readonly callerError?: ((error: unknown) => boolean) | undefined;
}

export class LazyConnection<Database> {
  readonly kind: StoreLocation['kind'];
  private connection: Promise<Connection<Database>> | undefined;
  private closed = false;

  constructor(private readonly options: LazyConnectionOptions) {
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

  /** Opens the connection and migrates now (otherwise the first call does). */
  async open(): Promise<void> {
    await this.connect();
  }

  async run<T>(work: (db: Kysely<Database>, connection: Connection<Database>) => Promise<T>): Promise<T> {
    const connection = await this.connect();
    try {
      return await work(connection.db, connection);
    } catch (error) {
      // Only the connection this work used: another call may have opened a new one meanwhile.
      // PostgreSQL's pool replaces broken clients itself.
      if (this.options.callerError?.(error) !== true && this.kind === 'sqlite') await this.drop(connection);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.drop();
  }

  private async connect(): Promise<Connection<Database>> {
    if (this.closed) throw new Error(`The ${this.options.name} is closed.`);
    if (this.connection !== undefined) {
      const current = await this.connection.catch(() => undefined);
      if (current !== undefined && current.stillValid()) return current;
      await this.drop();
    }
    const { location, role, migrations } = this.options;
    const opening = openConnection<Database>(location, (error) => this.options.onBackgroundError?.(error), role, migrations);
    this.connection = opening;
    try {
      return await opening;
    } catch (error) {
      if (this.connection === opening) this.connection = undefined;
      throw error;
    }
  }

  /** Closes the current connection, or only `used` if that is still the current one. */
  private async drop(used?: Connection<Database>): Promise<void> {
    const current = this.connection;
    if (current === undefined) return;
    const connection = await current.catch(() => undefined);
    if (used !== undefined && connection !== used) return;
    if (this.connection === current) this.connection = undefined;
    await connection?.close().catch(() => undefined);
  }
}
