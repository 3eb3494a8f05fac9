/**
 * The config all replicas serve: one row (`shared_config`, id 1) holding the
 * text and its version (the admin API's ETag). A write is a compare-and-swap
 * on the version inside one transaction that also adds the config history's
 * row and NOTIFYs `mana_llm_config`: all of it commits, or none of it.
 */
import { MAX_CONFIG_BYTES, isPlainObject } from '@mana/llm-router';
import { addConfigVersionIn, type UsageDatabase } from '@mana/llm-usage-store';
import { sql, type Kysely } from 'kysely';
import { MAX_REPLICA_CHARS, accept, isReplicaName, parseJson, refuse, type Received } from './received.js';

export const CONFIG_CHANNEL = 'mana_llm_config';
const HEAD_ID = 1;

export interface SharedConfig {
  readonly version: string;
  readonly text: string;
  /** Epoch ms it was written. */
  readonly time: number;
  /** The replica that wrote it. */
  readonly replica: string;
}

export interface ConfigWrite {
  readonly version: string;
  readonly text: string;
  /** For the config history: `startup` (the seed), `admin`, `rollback`. */
  readonly source: string;
  readonly replica: string;
  readonly time: number;
}

/** The NOTIFY payload: which version, from whom (the text is read from the table: it may be up to 1 MB). */
export interface ConfigNotice {
  readonly version: string;
  readonly replica: string;
}

/** Longest version accepted (the admin API's versions are 16 hex digits). */
export const MAX_VERSION_CHARS = 64;

/** The shared config; throws when its row does not hold one this replica can use (the running config keeps serving). */
export async function readSharedConfig(db: Kysely<UsageDatabase>): Promise<SharedConfig | undefined> {
  const row = await db.selectFrom('shared_config').selectAll().where('id', '=', HEAD_ID).executeTakeFirst();
  if (row === undefined) return undefined;
  const head = readHead(row);
  if (!head.ok) throw new Error(`the shared config row is malformed: ${head.problem}`);
  if (Buffer.byteLength(row.text) > MAX_CONFIG_BYTES) throw new Error(`the shared config row is malformed: its text is larger than ${MAX_CONFIG_BYTES} bytes`);
  return { ...head.value, text: row.text, time: Number(row.ts) };
}

/** The shared version and its writer only (the reconciliation round's check: the text may be up to 1 MB). */
export async function readSharedConfigVersion(db: Kysely<UsageDatabase>): Promise<Received<ConfigNotice> | undefined> {
  const row = await db.selectFrom('shared_config').select(['version', 'replica']).where('id', '=', HEAD_ID).executeTakeFirst();
  return row === undefined ? undefined : readHead(row);
}

/** Stores `write` when the database holds no config yet; returns the config it holds afterwards (the seed, or what another replica seeded first). */
export async function seedSharedConfig(db: Kysely<UsageDatabase>, write: ConfigWrite): Promise<SharedConfig> {
  await db.transaction().execute(async (tx) => {
    const inserted = await tx
      .insertInto('shared_config')
      .values({ id: HEAD_ID, version: write.version, text: write.text, ts: write.time, replica: write.replica })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return;
    await addConfigVersionIn(tx, write);
    await notify(tx, write);
  });
  const head = await readSharedConfig(db);
  if (head === undefined) throw new Error('the shared config is missing right after seeding it');
  return head;
}

export type SwapResult = { readonly ok: true } | { readonly ok: false; readonly current: SharedConfig | undefined };

/** Replaces the shared config with `write` only if it is still `expectedVersion`. */
export async function swapSharedConfig(db: Kysely<UsageDatabase>, expectedVersion: string, write: ConfigWrite): Promise<SwapResult> {
  return db.transaction().execute(async (tx) => {
    // FOR UPDATE: two replicas writing at once are ordered here; the second sees the first's version.
    const row = await tx.selectFrom('shared_config').selectAll().where('id', '=', HEAD_ID).forUpdate().executeTakeFirst();
    if (row === undefined || row.version !== expectedVersion) {
      return { ok: false, current: row === undefined ? undefined : { version: row.version, text: row.text, time: Number(row.ts), replica: row.replica } };
    }
    await tx.updateTable('shared_config').set({ version: write.version, text: write.text, ts: write.time, replica: write.replica }).where('id', '=', HEAD_ID).execute();
    await addConfigVersionIn(tx, write);
    await notify(tx, write);
    return { ok: true };
  });
}

async function notify(tx: Kysely<UsageDatabase>, write: ConfigWrite): Promise<void> {
  const notice: ConfigNotice = { version: write.version, replica: write.replica };
  await sql`select pg_notify(${CONFIG_CHANNEL}, ${JSON.stringify(notice)})`.execute(tx);
}

export function decodeConfigNotice(payload: string): Received<ConfigNotice> {
  return readHead(parseJson(payload));
}

/** A notice, or the version and writer of the config row, checked (received.ts). */
function readHead(value: unknown): Received<ConfigNotice> {
  if (!isPlainObject(value)) return refuse('a config notice must be a JSON object');
  const { version, replica } = value;
  if (typeof version !== 'string' || version.length === 0 || version.length > MAX_VERSION_CHARS) return refuse(`version must be a string of 1 to ${MAX_VERSION_CHARS} characters`);
  if (!isReplicaName(replica)) return refuse(`replica must be a string of 1 to ${MAX_REPLICA_CHARS} characters`);
  return accept({ version, replica });
}
