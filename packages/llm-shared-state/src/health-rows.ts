/**
 * Health transitions in the `health_transitions` table (the newest per
 * provider and per target) and on the `mana_llm_health` channel. A transition
 * is upserted and announced in one statement (one transaction): NOTIFY is delivered on
 * commit, so a replica dying mid-write leaves neither a row nobody announced
 * nor an announcement of a row that is not there.
 */
import { MAX_UPSTREAM_DELAY_MS, PROVIDER_NAME, isPlainObject, modelIdProblem, splitTarget, type HealthTransition } from '@mana/llm-router';
import type { HealthTransitionsTable, UsageDatabase } from '@mana/llm-usage-store';
import { sql, type Kysely, type Selectable } from 'kysely';
import { MAX_REPLICA_CHARS, accept, isReplicaName, parseJson, refuse, type Received } from './received.js';

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

/**
 * A transition stamped later than this past the receiving replica's clock is
 * refused: replicas' clocks agree far closer than that, and a future `at`
 * would outrank every real transition about its subject.
 */
export const MAX_CLOCK_AHEAD_MS = 60_000; // 1 min

/**
 * A row (read from the table, or a NOTIFY payload) back as a transition, each
 * field checked (received.ts). A block that ends later than an upstream may
 * make us wait (MAX_UPSTREAM_DELAY_MS, 1 h) is held to that, as a Retry-After
 * is, counted from when it was seen: not from now, or each round reading the
 * same row again would push its end further. Before, `until:
 * 8640000000000000` blocked a target on every replica until a restart.
 */
export function readRow(row: unknown, now: number): Received<SharedTransition> {
  if (!isPlainObject(row)) return refuse('a transition must be an object');
  const { kind, subject, until, reason, at, replica } = row;
  if (kind !== 'provider_healthy' && kind !== 'provider_unhealthy' && kind !== 'cooldown') return refuse('kind must be provider_healthy, provider_unhealthy or cooldown');
  const name = subjectName(kind, subject);
  if (name === undefined) return refuse(kind === 'cooldown' ? 'subject must be target:<provider>/<model>' : 'subject must be provider:<name>');
  if (!isReplicaName(replica)) return refuse(`replica must be a string of 1 to ${MAX_REPLICA_CHARS} characters`);
  if (typeof at !== 'number' || !Number.isFinite(at) || at < 0) return refuse('at must be a time in epoch ms');
  if (at > now + MAX_CLOCK_AHEAD_MS) return refuse(`at must not be more than ${MAX_CLOCK_AHEAD_MS / 1000} s ahead of this replica's clock`);
  if (kind === 'provider_healthy') return accept({ transition: { kind, subject: name, at }, replica });
  if (typeof until !== 'number' || !Number.isFinite(until)) return refuse('until must be a time in epoch ms');
  if (typeof reason !== 'string' || reason.length > MAX_REASON_CHARS) return refuse(`reason must be a string of at most ${MAX_REASON_CHARS} characters`);
  const latest = Math.min(at, now) + MAX_UPSTREAM_DELAY_MS;
  return accept({ transition: { kind, subject: name, until: Math.min(until, latest), reason, at }, replica });
}

/** `provider:<name>` or `target:<provider>/<model>` as the kind says, with names a config could hold; the name, or undefined. */
function subjectName(kind: HealthTransition['kind'], subject: unknown): string | undefined {
  if (typeof subject !== 'string') return undefined;
  const prefix = kind === 'cooldown' ? 'target:' : 'provider:';
  if (!subject.startsWith(prefix)) return undefined;
  const name = subject.slice(prefix.length);
  if (modelIdProblem(name) !== undefined) return undefined; // length and printable ASCII, as for any model id
  const provider = kind === 'cooldown' ? splitTarget(name)?.provider : name;
  return provider !== undefined && PROVIDER_NAME.test(provider) ? name : undefined;
}

/** The NOTIFY payload: the row itself, so a listener applies it without a query. */
export function encodePayload(shared: SharedTransition): string {
  return JSON.stringify(toRow(shared));
}

export function decodePayload(payload: string, now: number): Received<SharedTransition> {
  const row = parseJson(payload);
  return row === undefined ? refuse('a health notification must be JSON') : readRow(row, now);
}

/**
 * Writes and announces a batch in one statement: the upsert is a
 * data-modifying CTE, which PostgreSQL runs whether or not the query reads
 * it, and the statement is its own transaction, so the notifications are
 * delivered on its commit with the rows. One round trip instead of a
 * transaction's 2 + 2 per transition: every round trip is a wake-up of this
 * process and of its server backend, and on a busy machine those wake-ups
 * are what a transition waits for before the other replicas hear of it.
 * An older transition never overwrites a newer one (replicas' reports can
 * cross on the way). `batch` holds one transition per subject (the pending
 * map's key): an upsert may not touch one row twice.
 */
export async function publishTransitions(db: Kysely<UsageDatabase>, batch: readonly SharedTransition[]): Promise<void> {
  if (batch.length === 0) return;
  const payloads = batch.map(encodePayload);
  await db
    .with('written', (cte) =>
      cte
        .insertInto('health_transitions')
        .values(batch.map(toRow))
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
        ),
    )
    // A function returning text in FROM names its one column as its alias: `announced` is each payload.
    .selectFrom(sql<{ announced: string }>`unnest(${payloads}::text[])`.as('announced'))
    .select(sql<string>`pg_notify(${HEALTH_CHANNEL}, announced)`.as('notified'))
    .execute();
}

/**
 * What every replica should know now: transitions whose block has not ended,
 * and recoveries (a replica that missed one would keep skipping a provider
 * that is back). Ended blocks are left out: applying them changes nothing.
 */
export async function readCurrentTransitions(db: Kysely<UsageDatabase>, now: number): Promise<Received<SharedTransition>[]> {
  const rows = await db
    .selectFrom('health_transitions')
    .selectAll()
    .where((eb) => eb.or([eb('kind', '=', 'provider_healthy'), eb('until', '>', now)]))
    .execute();
  return rows.map((row) => readRow(row, now));
}
