/**
 * The column declaration against what the store does with it, on a SQLite
 * file and on a real PostgreSQL: the table the migrations build has exactly
 * the declared columns (name, type, nullability), a record's every declared
 * column is stored as its kind says, and a query gives every served column
 * back. The usage API's JSON of it is checked on the built gateway
 * (apps/llm-gateway/src/e2e/usage-columns.e2e.test.ts).
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { SQL_TYPES } from './column-kinds.js';
import { recordBatch } from './record-block.js';
import { REQUEST_COLUMNS, type ListShape } from './request-columns.js';
import { attempt, request } from './test-records.js';
import { ENGINES, testLocation, type Engine, type TestLocation } from './test-stores.js';
import type { RequestRecord } from './types.js';
import { UsageStore } from './usage-store.js';

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** A record in which every column holds a value (none null), most of them unlike any other's. */
const EVERY_COLUMN: RequestRecord = request({
  requestId: 'req-every-column',
  time: T0 + 7,
  keyFingerprint: 'k:every',
  replica: 'gw-every:3025',
  api: 'messages',
  alias: 'every-alias',
  model: 'every-model',
  status: 503,
  code: 'all_targets_failed',
  stream: true,
  priority: 'high',
  durationMs: 812.5,
  ttfbMs: 120.25,
  promptTokens: 11,
  completionTokens: 13,
  cachedTokens: 4,
  costUsd: 0.000031,
  attempts: [
    attempt(0, { outcome: 'failed', reason: 'http_429', upstreamStatus: 429, durationMs: 3.5, promptTokens: 1, completionTokens: 2, cachedTokens: 3, costUsd: 0.000001, failedOver: true }),
    attempt(1, { target: 'ollama/every', provider: 'ollama', model: 'every', outcome: 'failed', reason: 'http_503', upstreamStatus: 503, durationMs: 90.5, cachedTokens: 5, failedOver: false }),
  ],
});

interface SchemaColumn {
  readonly name: string;
  readonly type: string;
  readonly nullable: boolean;
}

type Row = Record<string, unknown>;

/** The table as the engine describes it, and its rows as the engine returns them, read without the store's code. */
async function onTheEngine<T>(where: TestLocation, read: (sql: (text: string) => Promise<Row[]>) => Promise<T>): Promise<T> {
  if (where.location.kind === 'sqlite') {
    const raw = new BetterSqlite3(where.location.file, { readonly: true });
    try {
      return await read(async (text) => raw.prepare(text).all() as Row[]);
    } finally {
      raw.close();
    }
  }
  const client = new pg.Client({ connectionString: where.location.url });
  await client.connect();
  try {
    return await read(async (text) => (await client.query<Row>(text)).rows);
  } finally {
    await client.end();
  }
}

async function schemaOf(engine: Engine, where: TestLocation): Promise<SchemaColumn[]> {
  return onTheEngine(where, async (sql) => {
    if (engine === 'sqlite') {
      // SQLite keeps the declared type as written; a text primary key may hold null unless declared NOT NULL (it never does here).
      const rows = await sql('PRAGMA table_info(usage_requests)');
      return rows.map((r) => ({ name: String(r.name), type: String(r.type).toLowerCase(), nullable: r.notnull === 0 && r.pk === 0 }));
    }
    const rows = await sql(`SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'usage_requests'`);
    return rows.map((r) => ({ name: String(r.column_name), type: String(r.data_type), nullable: r.is_nullable === 'YES' }));
  });
}

/** An item of a list as the column stores it, by the declaration: objects by field name, or value lists in field order; booleans as 1 or 0. */
function storedItem(list: ListShape, item: object): unknown {
  const values = list.fields.map((f) => {
    const value = (item as Record<string, unknown>)[f.field];
    return f.kind === 'boolean' ? (value ? 1 : 0) : value;
  });
  return list.stored === 'value lists' ? values : Object.fromEntries(list.fields.map((f, i) => [f.field, values[i]]));
}

type Column = (typeof REQUEST_COLUMNS)[number];

/** The column's value in `record` as the declaration reads it: the field it copies, or its `read` (the row id is made by the writer). */
function declaredValue(column: Column, record: RequestRecord): unknown {
  if ('read' in column) return column.read(record);
  return column.kind === 'row-id' ? undefined : record[column.field];
}

/** What the declaration says the column holds for `record`; the row id is checked apart. */
function expectedCell(column: Column, record: RequestRecord): unknown {
  const value = declaredValue(column, record);
  if (column.kind === 'boolean') return value ? 1 : 0;
  if (column.kind === 'json') return (value as readonly object[]).map((item) => storedItem(column.list, item));
  return value;
}

describe('the column declaration', () => {
  it('names each column, each StoredRequest field and each JSON field once', () => {
    const unique = (names: string[]) => expect(new Set(names).size).toBe(names.length);
    unique(REQUEST_COLUMNS.map((c) => c.name));
    unique(REQUEST_COLUMNS.flatMap((c) => ('field' in c ? [c.field] : [])));
    unique(REQUEST_COLUMNS.flatMap((c) => ('json' in c ? [c.json] : [])));
    for (const c of REQUEST_COLUMNS) if (c.kind === 'json') unique(c.list.fields.map((f) => f.json));
  });
});

describe.each(ENGINES)('the declared columns on %s', (engine) => {
  let where: TestLocation | undefined;
  let store: UsageStore | undefined;

  afterEach(async () => {
    await store?.close();
    await where?.cleanup();
    store = undefined;
    where = undefined;
  });

  async function storeWith(records: readonly RequestRecord[]): Promise<TestLocation> {
    where = await testLocation(engine);
    store = new UsageStore({ location: where.location });
    await store.write(recordBatch(records));
    return where;
  }

  it('are exactly the columns the migrations build: name, type and nullability', async () => {
    const schema = await schemaOf(engine, await storeWith([]));
    const declared = REQUEST_COLUMNS.map((c) => ({ name: c.name, type: SQL_TYPES[c.kind], nullable: c.nullable !== false }));
    const byName = (a: SchemaColumn, b: SchemaColumn) => a.name.localeCompare(b.name);
    expect([...schema].sort(byName)).toEqual([...declared].sort(byName));
  }, 60_000);

  it('are each stored as declared, none left out', async () => {
    const at = await storeWith([EVERY_COLUMN]);
    const [row] = await onTheEngine(at, (sql) => sql('SELECT * FROM usage_requests'));
    expect(row).toBeDefined();
    for (const column of REQUEST_COLUMNS) {
      const cell = row?.[column.name];
      // Every column holds a value: the record leaves none null, so a column left out of the INSERT shows.
      expect(cell, column.name).not.toBeNull();
      if (column.kind === 'row-id') expect(String(cell), column.name).toMatch(new RegExp(`^${(T0 + 7).toString(36).padStart(9, '0')}-[0-9a-f]{12}[0-9a-z]{6}$`));
      // PostgreSQL hands bigints back as text.
      else if (column.kind === 'time') expect(Number(cell), column.name).toBe(expectedCell(column, EVERY_COLUMN));
      else if (column.kind === 'json') expect(JSON.parse(String(cell)), column.name).toEqual(expectedCell(column, EVERY_COLUMN));
      else expect(cell, column.name).toBe(expectedCell(column, EVERY_COLUMN));
    }
  }, 60_000);

  it('come back from a query, every served column under its field', async () => {
    await storeWith([EVERY_COLUMN]);
    const [stored] = (await store!.requests({})).requests;
    const served = REQUEST_COLUMNS.filter((c) => 'field' in c);
    expect(Object.keys(stored ?? {}).sort()).toEqual(served.map((c) => c.field).sort());
    for (const column of served) {
      if (column.kind === 'row-id') continue; // checked above
      expect(stored?.[column.field], column.field).toEqual(declaredValue(column, EVERY_COLUMN));
    }
  }, 60_000);
});
