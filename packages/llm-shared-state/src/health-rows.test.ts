import { MAX_UPSTREAM_DELAY_MS, type HealthTransition } from '@mana/llm-router';
import { openConnection, type Connection } from '@mana/llm-usage-store';
import { startTestPostgres, type TestPostgres } from '@mana/llm-testkit';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Received } from './received.js';
import { HEALTH_CHANNEL, MAX_CLOCK_AHEAD_MS, MAX_REASON_CHARS, decodePayload, encodePayload, publishTransitions, readCurrentTransitions, readRow, type SharedTransition } from './health-rows.js';

let postgres: TestPostgres;
let connection: Connection;
let listener: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  postgres = await startTestPostgres();
  connection = await openConnection({ kind: 'postgres', url: postgres.url }, () => undefined);
  listener = new pg.Client({ connectionString: postgres.url });
  listener.on('error', () => undefined); // a dropped connection shows as missing notifications; unheard, it would end the test process
  await listener.connect();
  listener.on('notification', (m) => heard.push(m.payload ?? ''));
  await listener.query(`LISTEN ${HEALTH_CHANNEL}`);
}, 60_000);

afterAll(async () => {
  await listener?.end();
  await connection?.close();
  await postgres?.stop();
});

const now = Date.now();
/** The transition of a row that passed its checks, as a list of zero or one (for flatMap). */
const accepted = (r: Received<SharedTransition>): SharedTransition[] => (r.ok ? [r.value] : []);
const unhealthy = (subject: string, at: number, reason = 'connect_refused'): SharedTransition => ({
  transition: { kind: 'provider_unhealthy', subject, until: at + 60_000, reason, at },
  replica: 'a',
});

describe('health_transitions (real PostgreSQL)', () => {
  it('keeps the newest transition per subject: an older one arriving late does not overwrite it', async () => {
    await publishTransitions(connection.db, [unhealthy('gpu', now + 1_000)]);
    await publishTransitions(connection.db, [{ transition: { kind: 'provider_healthy', subject: 'gpu', at: now }, replica: 'b' }]);
    const rows = (await readCurrentTransitions(connection.db, now)).flatMap(accepted);
    expect(rows.filter((r) => r.transition.subject === 'gpu')).toEqual([unhealthy('gpu', now + 1_000)]);
  });

  it('a write that fails midway leaves neither its rows nor its announcements (one transaction)', async () => {
    heard.length = 0;
    const broken: SharedTransition = { transition: { kind: 'cooldown', subject: 'gpu/x', until: Number.NaN, reason: 'x', at: now }, replica: 'a' };
    await expect(publishTransitions(connection.db, [unhealthy('half', now), broken])).rejects.toThrow();
    // Notifications arrive in commit order: once a sentinel sent after the failed write has arrived,
    // anything that write announced would have arrived before it.
    await heardSentinel();
    // Only this write's subjects count: an earlier test's announcement may still be arriving on a busy machine.
    expect(heard.filter((payload) => accepted(decodePayload(payload, Date.now()))[0]?.transition.subject === 'half')).toEqual([]);
    expect((await readCurrentTransitions(connection.db, now)).flatMap(accepted).some((r) => r.transition.subject === 'half')).toBe(false);
  });

  it('a batch writes every row and announces every transition, an older one among them writing no row', async () => {
    await publishTransitions(connection.db, [unhealthy('held', now + 5_000)]);
    heard.length = 0;
    const batch = [unhealthy('b1', now), unhealthy('b2', now), { ...unhealthy('held', now), replica: 'late' }];
    await publishTransitions(connection.db, batch);
    const subjects = () => heard.flatMap((payload) => accepted(decodePayload(payload, Date.now()))).map((r) => r.transition.subject);
    await expect.poll(subjects).toEqual(expect.arrayContaining(['b1', 'b2', 'held']));
    const rows = (await readCurrentTransitions(connection.db, now)).flatMap(accepted);
    expect(rows.filter((r) => ['b1', 'b2'].includes(r.transition.subject)).map((r) => r.transition.subject).sort()).toEqual(['b1', 'b2']);
    expect(rows.filter((r) => r.transition.subject === 'held')).toEqual([unhealthy('held', now + 5_000)]);
  });

  it('cuts long reasons, drops NUL characters, and the payload round-trips', async () => {
    heard.length = 0;
    const reason = `bad\u0000gateway ${'x'.repeat(10_000)}`;
    await publishTransitions(connection.db, [unhealthy('nul', now, reason)]);
    await expect.poll(() => heard.length).toBe(1);
    const [received] = accepted(decodePayload(heard[0]!, Date.now()));
    if (received === undefined) throw new Error(`refused: ${heard[0]}`);
    const t = received.transition as Extract<HealthTransition, { kind: 'provider_unhealthy' }>;
    expect(t.reason.startsWith('badgateway xxx')).toBe(true);
    expect(t.reason).toHaveLength(MAX_REASON_CHARS);
    expect(decodePayload(encodePayload(received), Date.now())).toEqual({ ok: true, value: received });
    expect(decodePayload('{"not":"a row"}', Date.now())).toMatchObject({ ok: false });
  });
});

describe('readRow: what a replica accepts from PostgreSQL', () => {
  const at = now;
  const row = { subject: 'target:gpu/small', kind: 'cooldown', until: at + 60_000, reason: 'rate_limited', at, replica: 'b' };
  const refused = (value: unknown) => readRow(value, now);

  it('accepts a well-formed row unchanged', () => {
    expect(readRow(row, now)).toEqual({ ok: true, value: { transition: { kind: 'cooldown', subject: 'gpu/small', until: at + 60_000, reason: 'rate_limited', at }, replica: 'b' } });
    expect(readRow({ ...row, subject: 'provider:gpu', kind: 'provider_healthy', until: null, reason: null }, now)).toEqual({
      ok: true,
      value: { transition: { kind: 'provider_healthy', subject: 'gpu', at }, replica: 'b' },
    });
  });

  it.each([
    ['not an object', [row]],
    ['an unknown kind', { ...row, kind: 'quarantine' }],
    ['a subject that is not a string', { ...row, subject: 7 }],
    ['a subject of the other kind', { ...row, subject: 'provider:gpu' }],
    ['a target without a model', { ...row, subject: 'target:gpu' }],
    ['a provider name no config can hold', { ...row, kind: 'provider_unhealthy', subject: 'provider:GPU one' }],
    ['a subject longer than a model id may be', { ...row, subject: `target:gpu/${'x'.repeat(5_000)}` }],
    ['a subject with control characters', { ...row, subject: 'target:gpu/a\nb' }],
    ['a non-string reason', { ...row, reason: 42 }],
    ['a reason that is an object', { ...row, reason: { toString: 1 } }],
    ['a reason longer than any replica writes', { ...row, reason: 'x'.repeat(MAX_REASON_CHARS + 1) }],
    ['an until that is not a number', { ...row, until: '9999' }],
    ['a missing until', { ...row, until: null }],
    ['an at that is not a number', { ...row, at: null }],
    ['a negative at', { ...row, at: -1 }],
    ['an at more than a minute ahead of this clock', { ...row, at: now + MAX_CLOCK_AHEAD_MS + 1_000 }],
    ['a replica that is not a string', { ...row, replica: 12 }],
    ['an empty replica', { ...row, replica: '' }],
  ])('refuses %s, naming the field', (_, value) => {
    const result = refused(value);
    expect(result.ok).toBe(false);
    // The problem names what is wrong, never the value itself.
    if (!result.ok) expect(result.problem).not.toContain('xxxxxxxxxx');
  });

  it('holds a block to an hour after it was seen, however far its until is', () => {
    for (const until of [8_640_000_000_000_000, 9e18, 1e300]) {
      expect(readRow({ ...row, until }, now)).toMatchObject({ ok: true, value: { transition: { until: at + MAX_UPSTREAM_DELAY_MS } } });
    }
    // Counted from its own time when that is past, so reading the same row again later does not extend it.
    const older = { ...row, at: now - 10_000, until: 9e18 };
    expect(readRow(older, now + 50_000)).toMatchObject({ ok: true, value: { transition: { until: now - 10_000 + MAX_UPSTREAM_DELAY_MS } } });
    // From now when it is stamped slightly ahead (another replica's clock).
    expect(readRow({ ...row, at: now + 5_000, until: 9e18 }, now)).toMatchObject({ ok: true, value: { transition: { until: now + MAX_UPSTREAM_DELAY_MS } } });
  });
});

let sentinels = 0;
/** Sends a NOTIFY on the health channel and waits until the listener has heard it. */
async function heardSentinel(): Promise<void> {
  const sentinel = `sentinel-${++sentinels}`;
  await sql`select pg_notify(${HEALTH_CHANNEL}, ${sentinel})`.execute(connection.db);
  const deadline = Date.now() + 5_000;
  while (!heard.includes(sentinel)) {
    if (Date.now() > deadline) throw new Error('the sentinel notification never arrived');
    await new Promise((r) => setTimeout(r, 10));
  }
}
