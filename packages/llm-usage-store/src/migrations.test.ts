/**
 * Upgrading stores written by earlier versions: before the rollups existed
 * (migration 0004 builds them from the stored rows; a real SQLite file), and
 * before attempts moved into their request's row (0013; SQLite and a real
 * PostgreSQL server), and before requests carried their key (0016; both).
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { attempt, request, rescuedRequest } from './test-records.js';
import { testLocation, type TestLocation } from './test-stores.js';
import { recordBatch } from './record-block.js';
import { UsageStore } from './usage-store.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
const HOUR = 3_600_000;

const DERIVED_BY_OLD_VERSIONS = `
  -- final: the request ended with it; rescue: answered after a failed-over call (an ok attempt is always
  -- the last, so any failover of the request came before it); ttfb on the last attempt
  CASE WHEN LAST AND FAILED_OVER = 0 THEN 1 ELSE 0 END,
  CASE WHEN OUTCOME = 'ok' AND r.failovers > 0 THEN 1 ELSE 0 END,
  CASE WHEN LAST THEN r.ttfb_ms END`;
const ATTEMPT_COLUMNS = `request_row_id, position, ts, alias, target, provider, model, outcome, reason, upstream_status,
  duration_ms, prompt_tokens, completion_tokens, cached_tokens, cost_usd, failed_over, final, rescue, ttfb_ms`;
const UNDO_0013 = `
  ALTER TABLE usage_requests DROP COLUMN attempts;
  DELETE FROM kysely_migration WHERE name = '0013_attempts_in_request_row';`;

/**
 * Rewrites a store into the layout of the versions before 0013, as they wrote
 * it: each attempt a row of `usage_attempts` (with the `final`, `rescue` and
 * `ttfb_ms` they derived), no `attempts` column, 0013 not applied. Returns the
 * number of attempt rows.
 */
async function toLayoutBefore0013(where: TestLocation): Promise<number> {
  if (where.location.kind === 'sqlite') {
    const raw = new BetterSqlite3(where.location.file);
    try {
      const field = (i: number) => `a.value ->> '$[${i}]'`;
      const derived = DERIVED_BY_OLD_VERSIONS.replaceAll('LAST', 'a.key = json_array_length(r.attempts) - 1')
        .replaceAll('FAILED_OVER', field(11))
        .replaceAll('OUTCOME', field(3));
      raw.exec(`
        INSERT INTO usage_attempts (${ATTEMPT_COLUMNS})
        SELECT r.id, a.key, r.ts, r.alias, ${[...Array(12).keys()].map(field).join(', ')}, ${derived}
        FROM usage_requests r, json_each(r.attempts) a;
        ${UNDO_0013}`);
      return (raw.prepare('SELECT count(*) AS n FROM usage_attempts').get() as { n: number }).n;
    } finally {
      raw.close();
    }
  }
  const client = new pg.Client({ connectionString: where.location.url });
  client.on('error', () => undefined); // a dropped connection fails the query in flight; unheard, it would end the test process
  await client.connect();
  try {
    const types = ['text', 'text', 'text', 'text', 'text', 'int', 'float8', 'int', 'int', 'int', 'float8', 'int'];
    const field = (i: number) => `(a.v ->> ${i})::${types[i]}`;
    const derived = DERIVED_BY_OLD_VERSIONS.replaceAll('LAST', 'a.ord = jsonb_array_length(r.attempts::jsonb)')
      .replaceAll('FAILED_OVER', field(11))
      .replaceAll('OUTCOME', field(3));
    await client.query(`
      INSERT INTO usage_attempts (${ATTEMPT_COLUMNS})
      SELECT r.id, a.ord - 1, r.ts, r.alias, ${[...Array(12).keys()].map(field).join(', ')}, ${derived}
      FROM usage_requests r CROSS JOIN LATERAL jsonb_array_elements(r.attempts::jsonb) WITH ORDINALITY AS a(v, ord);
      ${UNDO_0013}`);
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM usage_attempts')).rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe('migration 0004 (rollups)', () => {
  let where: TestLocation | undefined;

  afterEach(async () => {
    await where?.cleanup();
  });

  it('builds the rollups of rows stored before it, so summaries of old data stay right', async () => {
    where = await testLocation('sqlite');
    const records = [
      rescuedRequest({ requestId: 'a', time: T0 - 50 * HOUR }),
      request({ requestId: 'b', time: T0 - 2 * HOUR + 17, alias: 'other' }),
      request({ requestId: 'c', time: T0 + 5, status: 502, code: 'all_targets_failed' }),
    ];
    let store = new UsageStore({ location: where.location });
    await store.write(recordBatch(records));
    const before = await store.summary({ groupBy: 'alias' });
    await store.close();

    // The file as the previous version left it: rows, no rollups table, 0004 not applied.
    const file = (where.location as { file: string }).file;
    await toLayoutBefore0013(where);
    const raw = new BetterSqlite3(file);
    raw.exec(`DROP TABLE usage_rollups; DELETE FROM kysely_migration WHERE name = '0004_usage_rollups'`);
    raw.close();

    store = new UsageStore({ location: where.location });
    try {
      expect(await store.summary({ groupBy: 'alias' })).toEqual(before);
      expect((await store.summary({ groupBy: 'target', since: T0 - 3 * HOUR })).map((r) => [r.key, r.requests])).toEqual([['groq/llama-3.1-8b-instant', 2]]);
      expect(before.map((r) => [r.key, r.requests, r.errors, r.rescued])).toEqual([
        ['fast-text', 2, 2, 1],
        ['other', 1, 0, 0],
      ]);
    } finally {
      await store.close();
    }
  });
});

describe.each(['sqlite', 'postgres'] as const)('migration 0013 (attempts in their request row), %s', (engine) => {
  let where: TestLocation | undefined;

  afterEach(async () => {
    await where?.cleanup();
  });

  it('requests stored before it read the same after it, next to requests stored after it', async () => {
    where = await testLocation(engine);
    const failed = (position: number, target: string) =>
      attempt(position, { target, outcome: 'failed', reason: 'http_503', upstreamStatus: 503, promptTokens: null, completionTokens: null, costUsd: null, failedOver: true });
    const old = [
      rescuedRequest({ requestId: 'rescued', time: T0 + 1_000 }),
      request({ requestId: 'twice', time: T0 + 2_000, attempts: [failed(0, 'together/a'), failed(1, 'openrouter/b'), attempt(2)] }),
      request({ requestId: 'rejected', time: T0 + 3_000, status: 400, code: 'invalid_request', attempts: [] }),
      request({ requestId: 'plain', time: T0 + 4_000 }),
    ];
    // Seconds inside one minute: the summaries read these rows, not rollups.
    const window = { since: T0 + 500, until: T0 + 30_000 };
    let store = new UsageStore({ location: where.location });
    await store.write(recordBatch(old));
    const before = {
      requests: await store.requests({}),
      errors: await store.errors({}),
      byTarget: await store.summary({ groupBy: 'target', ...window }),
      byProvider: await store.summary({ groupBy: 'provider', ...window }),
    };
    await store.close();

    expect(await toLayoutBefore0013(where)).toBe(6);

    store = new UsageStore({ location: where.location });
    try {
      expect(await store.requests({})).toEqual(before.requests);
      expect(await store.errors({})).toEqual(before.errors);
      expect(await store.summary({ groupBy: 'target', ...window })).toEqual(before.byTarget);
      expect(await store.summary({ groupBy: 'provider', ...window })).toEqual(before.byProvider);
      expect(before.requests.requests.map((r) => [r.requestId, r.attempts.map((a) => `${a.target}:${a.outcome}`)])).toEqual([
        ['plain', ['groq/llama-3.1-8b-instant:ok']],
        ['rejected', []],
        ['twice', ['together/a:failed', 'openrouter/b:failed', 'groq/llama-3.1-8b-instant:ok']],
        ['rescued', ['groq/llama-3.1-8b-instant:failed', 'ollama/gemma3:4b:ok']],
      ]);

      // A request stored after the upgrade counts with the old ones.
      await store.write(recordBatch([rescuedRequest({ requestId: 'new', time: T0 + 5_000 })]));
      expect((await store.requests({})).requests.map((r) => [r.requestId, r.attempts.length])).toEqual([
        ['new', 2],
        ['plain', 1],
        ['rejected', 0],
        ['twice', 3],
        ['rescued', 2],
      ]);
      const groq = (await store.summary({ groupBy: 'target', ...window })).find((r) => r.key === 'groq/llama-3.1-8b-instant');
      const groqBefore = before.byTarget.find((r) => r.key === 'groq/llama-3.1-8b-instant');
      expect([groq?.requests, groq?.errors]).toEqual([groqBefore!.requests, groqBefore!.errors + 1]);
    } finally {
      await store.close();
    }
  });
});

const UNDO_0016 = `
  DROP INDEX usage_requests_key_id_ts;
  ALTER TABLE usage_requests DROP COLUMN key_id;
  ALTER TABLE usage_requests DROP COLUMN key_name;
  DELETE FROM usage_rollups WHERE dim = 'key';
  DELETE FROM kysely_migration WHERE name = '0016_key_identity';`;

/** Rewrites a store into the layout of the versions before 0016: no key columns, no key rollups, 0016 not applied. */
async function toLayoutBefore0016(where: TestLocation): Promise<void> {
  if (where.location.kind === 'sqlite') {
    const raw = new BetterSqlite3(where.location.file);
    try {
      raw.exec(UNDO_0016);
    } finally {
      raw.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: where.location.url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(UNDO_0016);
  } finally {
    await client.end();
  }
}

describe.each(['sqlite', 'postgres'] as const)('migration 0016 (key identity), %s', (engine) => {
  let where: TestLocation | undefined;

  afterEach(async () => {
    await where?.cleanup();
  });

  it('rows stored before it have no key, and the summary by key counts them all, from rollups and raw rows alike', async () => {
    where = await testLocation(engine);
    // Across days, hours and minutes, so that whole days and hours are read from rollups.
    const old = [
      rescuedRequest({ requestId: 'days-ago', time: T0 - 50 * HOUR }),
      request({ requestId: 'hours-ago', time: T0 - 2 * HOUR + 17, alias: 'other' }),
      request({ requestId: 'now', time: T0 + 5, status: 502, code: 'all_targets_failed' }),
    ];
    let store = new UsageStore({ location: where.location });
    await store.write(recordBatch(old));
    const byAlias = await store.summary({ groupBy: 'alias', since: T0 - 60 * HOUR, until: T0 + HOUR });
    await store.close();

    await toLayoutBefore0016(where);

    store = new UsageStore({ location: where.location });
    try {
      const stored = (await store.requests({})).requests;
      expect(stored.map((r) => [r.requestId, r.keyId, r.keyName])).toEqual([
        ['now', null, null],
        ['hours-ago', null, null],
        ['days-ago', null, null],
      ]);
      const total = (rows: readonly { requests: number; errors: number; rescued: number }[]) =>
        rows.reduce((sum, r) => [sum[0]! + r.requests, sum[1]! + r.errors, sum[2]! + r.rescued], [0, 0, 0]);
      for (const window of [{ since: T0 - 60 * HOUR, until: T0 + HOUR }, { since: T0 - 3 * HOUR + 61_234, until: T0 + 30_000 }, {}]) {
        const byKey = await store.summary({ groupBy: 'key', ...window });
        expect(byKey.map((r) => r.key)).toEqual([null]);
        expect(total(byKey)).toEqual(total(await store.summary({ groupBy: 'alias', ...window })));
      }
      expect(total(byAlias)).toEqual([3, 2, 1]);

      // A request stored after the upgrade carries its key, beside the old ones.
      await store.write(recordBatch([request({ requestId: 'new', time: T0 + 10, keyId: 'env-2', keyName: 'env-2' })]));
      const byKey = await store.summary({ groupBy: 'key', since: T0 - 60 * HOUR, until: T0 + HOUR });
      expect(byKey.map((r) => [r.key, r.requests])).toEqual([[null, 3], ['env-2', 1]]);
      expect((await store.requests({ key: 'env-2' })).requests.map((r) => r.requestId)).toEqual(['new']);
    } finally {
      await store.close();
    }
  }, 60_000);
});
