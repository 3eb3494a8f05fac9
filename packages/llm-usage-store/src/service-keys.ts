/**
 * Service keys at rest (table `service_keys`, key-migrations.ts): each key's
 * settings and the SHA-256 digests of its current and, while in grace,
 * previous secret. A secret is never written: the record type has no place
 * for one. Every write is one transaction, so a process killed during a
 * create, an update or a rotation leaves the key as it was or as it is
 * afterwards, never half-written.
 */
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { KeyPriority, StoredServiceKey } from '@mana/llm-service-keys';
import type { KeyDatabase, ServiceKeysTable } from './key-schema.js';

type Row = Selectable<ServiceKeysTable>;

/**
 * With PostgreSQL, every key write NOTIFYs this channel with the key's id, in
 * its transaction (sent only if it commits): the other replicas read that key
 * again at once instead of at their next reconciliation.
 */
export const SERVICE_KEYS_CHANNEL = 'mana_llm_service_keys';

/** Whether writes announce themselves (PostgreSQL: other replicas listen; SQLite: one process). */
export interface KeyWriteOptions {
  readonly announce: boolean;
}

async function announce(tx: Transaction<KeyDatabase>, options: KeyWriteOptions, id: string): Promise<void> {
  if (options.announce) await sql`select pg_notify(${SERVICE_KEYS_CHANNEL}, ${id})`.execute(tx);
}

/** What a write found: the key written, no key with that id, or another key holding the name. */
export type ServiceKeyWrite =
  | { readonly kind: 'written'; readonly key: StoredServiceKey }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'name_taken'; readonly heldBy: string };

function rowOf(key: StoredServiceKey, updatedAt: number): Row {
  return {
    id: key.id,
    name: key.name,
    description: key.description,
    created_at: key.createdAt,
    updated_at: updatedAt,
    last_used_at: key.lastUsedAt,
    expires_at: key.expiresAt,
    disabled: key.disabled ? 1 : 0,
    aliases: key.aliases === null ? null : JSON.stringify(key.aliases),
    priority: key.priority,
    max_concurrency: key.maxConcurrency,
    secret_digest: key.digests.current,
    previous_digest: key.digests.previous,
    previous_valid_until: key.digests.previousValidUntil,
  };
}

const num = (value: number | null): number | null => (value === null ? null : Number(value));

function keyOf(row: Row): StoredServiceKey {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    createdAt: Number(row.created_at),
    lastUsedAt: num(row.last_used_at),
    expiresAt: num(row.expires_at),
    disabled: Number(row.disabled) === 1,
    aliases: row.aliases === null ? null : Object.freeze(JSON.parse(row.aliases) as string[]),
    priority: row.priority as KeyPriority | null,
    maxConcurrency: num(row.max_concurrency),
    digests: { current: row.secret_digest, previous: row.previous_digest, previousValidUntil: num(row.previous_valid_until) },
  };
}

/** A unique-index violation (the name, or in theory the id) on either engine. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

async function holderOf(db: Kysely<KeyDatabase> | Transaction<KeyDatabase>, name: string, exceptId: string): Promise<string | undefined> {
  const row = await db.selectFrom('service_keys').select('id').where('name', '=', name).where('id', '!=', exceptId).executeTakeFirst();
  return row?.id;
}

/** Every key, oldest first. */
export async function listServiceKeys(db: Kysely<KeyDatabase>): Promise<StoredServiceKey[]> {
  const rows = await db.selectFrom('service_keys').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(keyOf);
}

export async function getServiceKey(db: Kysely<KeyDatabase>, id: string): Promise<StoredServiceKey | undefined> {
  const row = await db.selectFrom('service_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : keyOf(row);
}

/** Inserts a new key unless its name is taken. */
export async function createServiceKey(db: Kysely<KeyDatabase>, key: StoredServiceKey, options: KeyWriteOptions): Promise<ServiceKeyWrite> {
  try {
    return await db.transaction().execute(async (tx) => {
      const heldBy = await holderOf(tx, key.name, key.id);
      if (heldBy !== undefined) return { kind: 'name_taken', heldBy } as const;
      await tx.insertInto('service_keys').values(rowOf(key, key.createdAt)).execute();
      await announce(tx, options, key.id);
      return { kind: 'written', key } as const;
    });
  } catch (error) {
    // Two creates of one name at once: the index decides, the loser hears who holds it.
    if (!isUniqueViolation(error)) throw error;
    const heldBy = await holderOf(db, key.name, key.id);
    if (heldBy === undefined) throw error;
    return { kind: 'name_taken', heldBy };
  }
}

/**
 * Reads key `id`, computes its next state with `change` (which may throw to
 * refuse: nothing is written then) and writes it, in one transaction, so the
 * change is computed from the stored key, not from a replica's copy of it.
 * The stored `last_used_at` is kept (it is written in the background).
 */
export async function updateServiceKey(
  db: Kysely<KeyDatabase>,
  id: string,
  change: (current: StoredServiceKey) => StoredServiceKey,
  now: number,
  options: KeyWriteOptions,
): Promise<ServiceKeyWrite> {
  try {
    return await db.transaction().execute(async (tx) => {
      const row = await tx.selectFrom('service_keys').selectAll().where('id', '=', id).executeTakeFirst();
      if (row === undefined) return { kind: 'not_found' } as const;
      const current = keyOf(row);
      const next = { ...change(current), id, createdAt: current.createdAt, lastUsedAt: current.lastUsedAt };
      if (next.name !== current.name) {
        const heldBy = await holderOf(tx, next.name, id);
        if (heldBy !== undefined) return { kind: 'name_taken', heldBy } as const;
      }
      const { id: _id, created_at: _created, last_used_at: _used, ...columns } = rowOf(next, now);
      await tx.updateTable('service_keys').set(columns).where('id', '=', id).execute();
      await announce(tx, options, id);
      return { kind: 'written', key: next } as const;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const name = (await getServiceKey(db, id))?.name;
    return { kind: 'name_taken', heldBy: name ?? '' };
  }
}

/** Deletes key `id`; false when there was none. */
export async function deleteServiceKey(db: Kysely<KeyDatabase>, id: string, options: KeyWriteOptions): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const result = await tx.deleteFrom('service_keys').where('id', '=', id).executeTakeFirst();
    const deleted = Number(result.numDeletedRows) > 0;
    if (deleted) await announce(tx, options, id);
    return deleted;
  });
}

/**
 * Records when keys were last used (epoch ms by id), in one transaction. A
 * time older than the stored one is ignored: several replicas report their
 * own, in any order. Unknown ids (a key deleted meanwhile) are skipped.
 */
export async function touchServiceKeys(db: Kysely<KeyDatabase>, lastUsed: ReadonlyMap<string, number>): Promise<void> {
  if (lastUsed.size === 0) return;
  await db.transaction().execute(async (tx) => {
    for (const [id, at] of lastUsed) {
      await tx
        .updateTable('service_keys')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
        .execute();
    }
  });
}
