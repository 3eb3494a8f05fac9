/**
 * Replica membership in the `replicas` table (one row per replica, its last
 * heartbeat) and on the `mana_llm_replicas` channel (a join or a clean leave,
 * so the others learn of it at once instead of at their next heartbeat).
 * Times are the database's clock: replicas' clocks need not agree for one
 * replica to judge whether another is alive.
 */
import type { UsageDatabase } from '@mana/llm-usage-store';
import { sql, type Kysely } from 'kysely';
import { isPlainObject } from '@mana/llm-router';
import { MAX_REPLICA_CHARS, accept, isReplicaName, parseJson, refuse, type Received } from './received.js';

export const REPLICAS_CHANNEL = 'mana_llm_replicas';
/** A row this much older than the liveness window is removed by whoever beats next: the table stays as small as the fleet. */
const FORGET_AFTER_MS = 60_000; // 1 min

export interface ReplicaNotice {
  readonly replica: string;
  readonly event: 'join' | 'leave';
}

/** The database's clock in epoch ms. */
const dbNow = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * One heartbeat: this replica's row refreshed (inserted on the first), rows
 * long dead removed, and the names of the replicas seen within `windowMs`,
 * in one statement. The data-modifying CTEs run whether or not the query
 * reads them, but the query sees the table as before them: the caller
 * counts itself anyway.
 */
export async function beat(db: Kysely<UsageDatabase>, replica: string, windowMs: number): Promise<string[]> {
  const rows = await db
    .with('refreshed', (cte) =>
      cte
        .insertInto('replicas')
        .values({ id: replica, last_seen: dbNow })
        .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ last_seen: eb.ref('excluded.last_seen') }))),
    )
    .with('forgotten', (cte) => cte.deleteFrom('replicas').where('last_seen', '<', sql<number>`${dbNow} - ${FORGET_AFTER_MS + windowMs}`))
    .selectFrom('replicas')
    .select('id')
    .where('last_seen', '>', sql<number>`${dbNow} - ${windowMs}`)
    .execute();
  return rows.map((row) => row.id);
}

/** Tells the others this replica joined (after its row is written, so a reader finds it). */
export async function announceJoin(db: Kysely<UsageDatabase>, replica: string): Promise<void> {
  await sql`select pg_notify(${REPLICAS_CHANNEL}, ${encodeNotice({ replica, event: 'join' })})`.execute(db);
}

/** A clean leave: the row removed and the others told, in one statement (one transaction). */
export async function leave(db: Kysely<UsageDatabase>, replica: string): Promise<void> {
  await db
    .with('gone', (cte) => cte.deleteFrom('replicas').where('id', '=', replica))
    .selectNoFrom(sql<string>`pg_notify(${REPLICAS_CHANNEL}, ${encodeNotice({ replica, event: 'leave' })})`.as('notified'))
    .execute();
}

export function encodeNotice(notice: ReplicaNotice): string {
  return JSON.stringify(notice);
}

export function decodeNotice(payload: string): Received<ReplicaNotice> {
  const notice = parseJson(payload);
  if (!isPlainObject(notice)) return refuse('a replica notification must be a JSON object');
  const { replica, event } = notice;
  if (!isReplicaName(replica)) return refuse(`replica must be a string of 1 to ${MAX_REPLICA_CHARS} characters`);
  if (event !== 'join' && event !== 'leave') return refuse('event must be join or leave');
  return accept({ replica, event });
}
