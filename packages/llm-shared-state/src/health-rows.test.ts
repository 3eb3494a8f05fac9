import type { HealthTransition } from '@mana/llm-router';
import { openConnection, type Connection } from '@mana/llm-usage-store';
import { startTestPostgres, type TestPostgres } from '@mana/llm-testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_CHANNEL, MAX_REASON_CHARS, decodePayload, encodePayload, publishTransitions, readCurrentTransitions, type SharedTransition } from './health-rows.js';

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
const unhealthy = (subject: string, at: number, reason = 'connect_refused'): SharedTransition => ({
  transition: { kind: 'provider_unhealthy', subject, until: at + 60_000, reason, at },
  replica: 'a',
});

describe('health_transitions (real PostgreSQL)', () => {
  it('keeps the newest transition per subject: an older one arriving late does not overwrite it', async () => {
    await publishTransitions(connection.db, [unhealthy('gpu', now + 1_000)]);
    await publishTransitions(connection.db, [{ transition: { kind: 'provider_healthy', subject: 'gpu', at: now }, replica: 'b' }]);
    const rows = await readCurrentTransitions(connection.db, now);
    expect(rows.filter((r) => r.transition.subject === 'gpu')).toEqual([unhealthy('gpu', now + 1_000)]);
  });

  it('a write that fails midway leaves neither its rows nor its announcements (one transaction)', async () => {
    heard.length = 0;
    const broken: SharedTransition = { transition: { kind: 'cooldown', subject: 'gpu/x', until: Number.NaN, reason: 'x', at: now }, replica: 'a' };
    await expect(publishTransitions(connection.db, [unhealthy('half', now), broken])).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 200)); // a notification sent before the failure would have arrived by now
    // Only this write's subjects count: an earlier test's announcement may still be arriving on a busy machine.
    expect(heard.filter((payload) => decodePayload(payload)?.transition.subject === 'half')).toEqual([]);
    expect((await readCurrentTransitions(connection.db, now)).some((r) => r.transition.subject === 'half')).toBe(false);
  });

  it('cuts long reasons, drops NUL characters, and the payload round-trips', async () => {
    heard.length = 0;
    const reason = `bad\u0000gateway ${'x'.repeat(10_000)}`;
    await publishTransitions(connection.db, [unhealthy('nul', now, reason)]);
    await expect.poll(() => heard.length).toBe(1);
    const received = decodePayload(heard[0]!)!;
    const t = received.transition as Extract<HealthTransition, { kind: 'provider_unhealthy' }>;
    expect(t.reason.startsWith('badgateway xxx')).toBe(true);
    expect(t.reason).toHaveLength(MAX_REASON_CHARS);
    expect(decodePayload(encodePayload(received))).toEqual(received);
    expect(decodePayload('{"not":"a row"}')).toBeUndefined();
  });
});
