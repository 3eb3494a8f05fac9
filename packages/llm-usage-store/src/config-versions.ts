/**
 * Config history: every config the gateway applied (at start, on reload, by an
 * admin write or rollback), newest first. A version is the admin API's hash of
 * the file's bytes, so the same text applied again later is the same version;
 * a lookup by version finds its newest application.
 */
import type { Kysely, Transaction } from 'kysely';
import { olderThan, keysetPage, pageLimit, pageOf } from './cursor.js';
import type { UsageDatabase } from './schema.js';
import { rowId } from './row-id.js';

export const DEFAULT_CONFIG_PAGE_SIZE = 20;
export const MAX_CONFIG_PAGE_SIZE = 100;
/** The newest applied configs kept; older ones are deleted as new ones arrive (each text is at most 1 MB). */
export const MAX_CONFIG_VERSIONS = 500;

export interface ConfigVersionInput {
  readonly version: string;
  readonly text: string;
  /** What applied it: `startup`, `signal`, `reload`, `admin`, `rollback`. */
  readonly source: string;
  /** Epoch ms. */
  readonly time: number;
}

export interface ConfigVersionEntry {
  readonly version: string;
  readonly source: string;
  readonly time: number;
}

export interface StoredConfigVersion extends ConfigVersionEntry {
  readonly text: string;
}

export interface ConfigVersionPage {
  readonly versions: ConfigVersionEntry[];
  readonly nextCursor: string | null;
}

export interface ConfigVersionWithPredecessor {
  readonly current: StoredConfigVersion;
  /** The config applied just before it; null for the first one kept. */
  readonly previous: StoredConfigVersion | null;
}

/** Records `input` unless it is already the newest entry (a reload of an unchanged file). Returns whether it was added. */
export async function addConfigVersion(db: Kysely<UsageDatabase>, input: ConfigVersionInput): Promise<boolean> {
  return db.transaction().execute((tx) => addConfigVersionIn(tx, input));
}

/** `addConfigVersion` inside a transaction the caller holds (the shared config's write commits both or neither). */
export async function addConfigVersionIn(tx: Transaction<UsageDatabase>, input: ConfigVersionInput): Promise<boolean> {
  const newest = await tx.selectFrom('config_versions').select('version').orderBy('ts', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  if (newest?.version === input.version) return false;
  await tx
    .insertInto('config_versions')
    .values({ id: rowId(input.time), ts: input.time, version: input.version, source: input.source, text: input.text })
    .execute();
  const oldestKept = await tx
    .selectFrom('config_versions')
    .select(['ts', 'id'])
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .offset(MAX_CONFIG_VERSIONS - 1)
    .limit(1)
    .executeTakeFirst();
  if (oldestKept !== undefined) {
    const { ts, id } = oldestKept;
    await tx
      .deleteFrom('config_versions')
      .where(olderThan(ts, id))
      .execute();
  }
  return true;
}

export async function listConfigVersions(db: Kysely<UsageDatabase>, query: { limit?: number; cursor?: string }): Promise<ConfigVersionPage> {
  const limit = pageLimit(query.limit, DEFAULT_CONFIG_PAGE_SIZE, MAX_CONFIG_PAGE_SIZE);
  const rows = await keysetPage(db.selectFrom('config_versions').select(['id', 'ts', 'version', 'source']), query.cursor, limit).execute();
  const { page, nextCursor } = pageOf(rows, limit);
  return { versions: page.map((r) => ({ version: r.version, source: r.source, time: Number(r.ts) })), nextCursor };
}

/** The newest application of `version` and the config applied just before it; undefined when not kept. */
export async function findConfigVersion(db: Kysely<UsageDatabase>, version: string): Promise<ConfigVersionWithPredecessor | undefined> {
  const current = await db
    .selectFrom('config_versions')
    .selectAll()
    .where('version', '=', version)
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (current === undefined) return undefined;
  const { ts, id } = current;
  const previous = await db
    .selectFrom('config_versions')
    .selectAll()
    .where(olderThan(ts, id))
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { current: stored(current), previous: previous === undefined ? null : stored(previous) };
}

function stored(row: { ts: number; version: string; source: string; text: string }): StoredConfigVersion {
  return { version: row.version, source: row.source, time: Number(row.ts), text: row.text };
}
