/**
 * Health transitions in the `health_transitions` table (the newest per
 * provider and per target) and on the `mana_llm_health` channel. A transition
 * is upserted and announced in one transaction: NOTIFY is delivered on
 * commit, so a replica dying mid-write leaves neither a row nobody announced
 * nor an announcement of a row that is not there.
 */
import type { HealthTransition } from '@mana/llm-router';
import type { HealthTransitionsTable, UsageDatabase } from '@mana/llm-usage-store';
import { sql, type Kysely, type Selectable } from 'kysely';

export const HEALTH_CHANNEL = 'mana_llm_health';
/** Reasons are cut to this length: a NOTIFY payload must stay under PostgreSQL's 8000 bytes. */
export const MAX_REASON_CHARS = 500;

/** A transition with the replica that saw it: what travels between replicas. */
export interface SharedTransition {
  readonly transition: HealthTransition;
  readonly replica: string;
}

/** The table's key: providers and targets each have their newest transition. */
export function subjectKey(t: HealthTransition): string {
  return t.kind === 'cooldown' ? `target:${t.subject}` : `provider:${t.subject}`;
}

/** Cut to MAX_REASON_CHARS, without NUL (PostgreSQL text refuses it: one upstream's odd error text would fail every batch). */
function cut(reason: string): string {
  const text = reason.includes('\u0000') ? reason.replaceAll('\u0000', '') : reason;
  return text.length <= MAX_REASON_CHARS ? text : `${text.slice(0, MAX_REASON_CHARS - 1)}…`;
}

export function toRow({ transition: t, replica }: SharedTransition): Selectable<HealthTransitionsTable> {
  return {
    subject: subjectKey(t),
    kind: t.kind,
    until: t.kind === 'provider_healthy' ? null : t.until,
    reason: t.kind === 'provider_healthy' ? null : cut(t.reason),
    at: t.at,
    replica,
  };
}

/** The row back as a transition; undefined for a row this code does not understand (a newer replica's kind). */
export function fromRow(row: Selectable<HealthTransitionsTable>): SharedTransition | undefined {
  const colon = row.subject.indexOf(':');
  const subject = row.subject.slice(colon + 1);
  const at = Number(row.at);
  const until = row.until === null ? undefined : Number(row.until);
  const reason = row.reason ?? '';
  let transition: HealthTransition;
  if (row.kind === 'provider_healthy') transition = { kind: 'provider_healthy', subject, at };
  else if ((row.kind === 'provider_unhealthy' || row.kind === 'cooldown') && until !== undefined) transition = { kind: row.kind, subject, until, reason, at };
  else return undefined;
  return { transition, replica: row.replica };
}

/** The NOTIFY payload: the row itself, so a listener applies it without a query. */
export function encodePayload(shared: SharedTransition): string {
  return JSON.stringify(toRow(shared));
}

export function decodePayload(payload: string): SharedTransition | undefined {
  try {
    const row = JSON.parse(payload) as Selectable<HealthTransitionsTable>;
    if (typeof row !== 'object' || row === null || typeof row.subject !== 'string' || typeof row.replica !== 'string' || typeof row.at !== 'number') return undefined;
    return fromRow(row);
  } catch {
    return undefined;
  }
}

/**
 * Writes and announces a batch in one transaction. An older transition never
 * overwrites a newer one (replicas' reports can cross on the way).
 */
export async function publishTransitions(db: Kysely<UsageDatabase>, batch: readonly SharedTransition[]): Promise<void> {
  if (batch.length === 0) return;
  await db.transaction().execute(async (tx) => {
    for (const shared of batch) {
      await tx
        .insertInto('health_transitions')
        .values(toRow(shared))
        .onConflict((oc) =>
          oc
            .column('subject')
            .doUpdateSet((eb) => ({
              kind: eb.ref('excluded.kind'),
              until: eb.ref('excluded.until'),
              reason: eb.ref('excluded.reason'),
              at: eb.ref('excluded.at'),
              replica: eb.ref('excluded.replica'),
            }))
            .where('health_transitions.at', '<=', (eb) => eb.ref('excluded.at')),
        )
        .execute();
      await sql`select pg_notify(${HEALTH_CHANNEL}, ${encodePayload(shared)})`.execute(tx);
    }
  });
}

/**
 * What every replica should know now: transitions whose block has not ended,
 * and recoveries (a replica that missed one would keep skipping a provider
 * that is back). Ended blocks are left out: applying them changes nothing.
 */
export async function readCurrentTransitions(db: Kysely<UsageDatabase>, now: number): Promise<SharedTransition[]> {
  const rows = await db
    .selectFrom('health_transitions')
    .selectAll()
    .where((eb) => eb.or([eb('kind', '=', 'provider_healthy'), eb('until', '>', now)]))
    .execute();
  return rows.flatMap((row) => fromRow(row) ?? []);
}
