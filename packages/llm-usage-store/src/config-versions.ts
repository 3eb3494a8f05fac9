/**
 * Config history: every config the gateway applied (at start, on reload, by an
 * admin write or rollback), newest first. A version is the admin API's hash of
 * the file's bytes, so the same text applied again later is the same version;
 * a lookup by version finds its newest application.
 */
import { randomBytes } from 'node:crypto';
import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { UsageDatabase } from './schema.js';
import { UsageQueryError } from './usage-query-error.js';

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

/** Rows older than (ts, id) in the history's order. */
function olderThan(ts: number, id: string) {
  return (eb: ExpressionBuilder<UsageDatabase, 'config_versions'>) => eb.or([eb('ts', '<', ts), eb.and([eb('ts', '=', ts), eb('id', '<', id)])]);
}

let sequence = 0;

/** Time-sortable and, within one process, in recording order even inside one millisecond. */
function configRowId(time: number): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${Math.max(0, Math.floor(time)).toString(36).padStart(9, '0')}-${sequence.toString().padStart(6, '0')}-${randomBytes(4).toString('hex')}`;
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
    .values({ id: configRowId(input.time), ts: input.time, version: input.version, source: input.source, text: input.text })
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
  const limit = query.limit ?? DEFAULT_CONFIG_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CONFIG_PAGE_SIZE) {
    throw new UsageQueryError(`limit must be an integer from 1 to ${MAX_CONFIG_PAGE_SIZE}.`, 'limit');
  }
  let q = db.selectFrom('config_versions');
  if (query.cursor !== undefined) {
    const { ts, id } = decodeCursor(query.cursor);
    q = q.where(olderThan(ts, id));
  }
  const rows = await q
    .select(['id', 'ts', 'version', 'source'])
    .orderBy('ts', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    versions: page.map((r) => ({ version: r.version, source: r.source, time: Number(r.ts) })),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(Number(last.ts), last.id) : null,
  };
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
