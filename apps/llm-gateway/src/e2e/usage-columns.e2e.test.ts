/**
 * Every column of the usage record declaration (@mana/llm-usage-store's
 * `REQUEST_COLUMNS`) as the built gateway's usage API serves it: a record
 * with a value in every column is stored in a SQLite file, and
 * GET /admin/usage/requests must answer each served column under its JSON
 * name, with the value the declaration reads from the record, as the type
 * the dashboard reads (`UsageRequestJson`, derived from the same kinds). The
 * store side (stored columns, the schema) is checked in the package's
 * request-columns.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeUpstream } from '@mana/llm-testkit';
import { recordBatch, REQUEST_COLUMNS, UsageStore, type KindWire, type ListShape, type RequestRecord } from '@mana/llm-usage-store';
import { aliasesYaml, spawnGateway, type Json } from './harness.js';
import { ADMIN, admin } from './usage-client.js';

/**
 * What each kind is in the JSON: each check is typed by the kind's type in
 * `KindWire` (what the dashboard's types are made of), so a change to one
 * that the other does not follow fails to compile.
 */
const IS_WIRE = {
  'row-id': (v: unknown): v is string => typeof v === 'string' && v !== '',
  text: (v: unknown): v is string => typeof v === 'string',
  'dictionary-string': (v: unknown): v is string => typeof v === 'string',
  integer: (v: unknown): v is number => Number.isInteger(v),
  real: (v: unknown): v is number => typeof v === 'number',
  boolean: (v: unknown): v is boolean => typeof v === 'boolean',
  time: (v: unknown): v is string => typeof v === 'string' && new Date(v).toISOString() === v,
} satisfies { readonly [K in keyof KindWire]: (value: unknown) => value is KindWire[K] };

const now = Date.now();

/** Every column holds a value (none null), most of them unlike any other's. */
const EVERY_COLUMN: RequestRecord = {
  requestId: 'req-every-column',
  time: now - 60_000,
  keyFingerprint: 'k:every',
  replica: 'gw-every:3025',
  api: 'messages',
  alias: 'mana/fast-text',
  model: 'mana/fast-text',
  target: 'u/m2',
  provider: 'u',
  status: 200,
  code: 'every_code',
  stream: true,
  priority: 'high',
  attemptCount: 2,
  plan: [
    { target: 'u/m', outcome: 'failed', reason: 'http_503' },
    { target: 'u/m2', outcome: 'ok', reason: 'ok' },
  ],
  durationMs: 812.5,
  ttfbMs: 120.25,
  promptTokens: 11,
  completionTokens: 13,
  cachedTokens: 4,
  costUsd: 0.000031,
  attempts: [
    { position: 0, target: 'u/m', provider: 'u', model: 'm', outcome: 'failed', reason: 'http_503', upstreamStatus: 503, durationMs: 3.5, promptTokens: 1, completionTokens: 2, cachedTokens: 3, costUsd: 0.000001, failedOver: true },
    { position: 1, target: 'u/m2', provider: 'u', model: 'm2', outcome: 'ok', reason: 'ok', upstreamStatus: 200, durationMs: 90.5, promptTokens: 11, completionTokens: 13, cachedTokens: 4, costUsd: 0.00003, failedOver: false },
  ],
};

/** An item of a list column as the declaration says the JSON holds it. */
function itemJson(list: ListShape, item: object, position: number): Record<string, unknown> {
  const fields = Object.fromEntries(list.fields.map((f) => [f.json, (item as Record<string, unknown>)[f.field]]));
  return list.numbered ? { position, ...fields } : fields;
}

let upstream: FakeUpstream;
let dataDir: string;

beforeAll(async () => {
  upstream = await startFakeOpenAI({ name: 'u' });
  dataDir = mkdtempSync(join(tmpdir(), 'mana-usage-columns-'));
  const store = new UsageStore({ location: { kind: 'sqlite', file: join(dataDir, 'usage.sqlite') } });
  await store.write(recordBatch([EVERY_COLUMN]));
  await store.close();
});

afterAll(async () => {
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the usage API serves every declared column', () => {
  it('under its JSON name, as its kind says, with the value the declaration reads from the record', async () => {
    const config = `providers:\n  u: { type: openai, base_url: "${upstream.baseUrl}", api_key: "sk-u" }\n${aliasesYaml({}, ['u/m', 'u/m2'])}`;
    const gw = await spawnGateway({ config, env: { MANA_LLM_ADMIN_KEY: ADMIN, MANA_LLM_DATA_DIR: dataDir } });
    try {
      const { status, body } = await admin(gw, '/admin/usage/requests');
      expect(status).toBe(200);
      expect(body.data).toHaveLength(1);
      const served: Json = body.data[0];
      const declared = REQUEST_COLUMNS.filter((c) => 'json' in c);
      // Nothing served that is not declared, nothing declared and served left out.
      expect(Object.keys(served).sort()).toEqual(declared.map((c) => c.json).sort());
      for (const column of declared) {
        const value = served[column.json];
        if (column.kind === 'row-id') {
          expect(IS_WIRE['row-id'](value), column.json).toBe(true);
          continue;
        }
        // The declared value: the record field the column copies, or its `read`.
        const read = 'read' in column ? column.read(EVERY_COLUMN) : EVERY_COLUMN[column.field];
        if (column.kind === 'json') {
          expect(value, column.json).toEqual((read as readonly object[]).map((item, position) => itemJson(column.list, item, position)));
          for (const item of value as Json[]) {
            expect(Object.keys(item).sort(), column.json).toEqual([...(column.list.numbered ? ['position'] : []), ...column.list.fields.map((f) => f.json)].sort());
            for (const f of column.list.fields) expect(IS_WIRE[f.kind](item[f.json]), `${column.json}.${f.json}`).toBe(true);
          }
          continue;
        }
        expect(IS_WIRE[column.kind](value), `${column.json}: ${JSON.stringify(value)} is not ${column.kind}`).toBe(true);
        expect(value, column.json).toEqual(column.kind === 'time' ? new Date(read as number).toISOString() : read);
      }
    } finally {
      await gw.stop();
    }
  }, 60_000);
});
