/**
 * A request record as its `usage_requests` row: the INSERT both engines run,
 * with its columns in declaration order (request-columns.ts), and what the
 * row adds to the rollups.
 */
import type { Selectable } from 'kysely';
import { CARRIED_COLUMNS } from './block-layout.js';
import type { Cell } from './block-code.js';
import type { RequestMeasures, RollupsBuilder } from './rollups.js';
import type { UsageRequestsTable } from './schema.js';
import { visitStoredAttempts, type StoredAttempt } from './stored-attempts.js';

/** A stored row, typed by the declaration (schema.ts). */
export type RequestRow = Selectable<UsageRequestsTable>;

/** The table's columns in declaration order: the INSERT's, and the order of a row's values (`BlockReader.read`). */
export const INSERT_COLUMNS: readonly (keyof RequestRow)[] = CARRIED_COLUMNS.map((c) => c.name);

/** A SQLite INSERT of `rows` rows, bound positionally; a row already stored (its id) is skipped. */
export function sqliteInsertOf(rows: number): string {
  const row = `(${INSERT_COLUMNS.map(() => '?').join(', ')})`;
  return `INSERT INTO usage_requests (${INSERT_COLUMNS.join(', ')}) VALUES ${Array.from({ length: rows }, () => row).join(', ')} ON CONFLICT (id) DO NOTHING`;
}

/** The row whose values are `values[at…]` with named columns (the PostgreSQL insert's shape). */
export function rowOf(values: readonly Cell[], at: number): RequestRow {
  const row: Record<string, Cell> = {};
  INSERT_COLUMNS.forEach((name, c) => (row[name] = values[at + c] ?? null));
  // The values `BlockReader.read` put in, in the order of the declaration the row's type is derived from.
  return row as unknown as RequestRow;
}

/** Where a column's value is among a row's values. */
function indexOf<K extends keyof RequestRow>(name: K): ColumnIndex<K> {
  return INSERT_COLUMNS.indexOf(name) as ColumnIndex<K>;
}
type ColumnIndex<K extends keyof RequestRow> = number & { readonly column: K };

/** The value of column K among a row's values `values[at…]` (`BlockReader.read` put it there, of the column's type). */
function cellAt<K extends keyof RequestRow>(values: readonly Cell[], at: number, index: ColumnIndex<K>): RequestRow[K] {
  return values[at + index] as RequestRow[K];
}

const TS = indexOf('ts');
const ALIAS = indexOf('alias');
const KEY_ID = indexOf('key_id');
const STATUS = indexOf('status');
const FAILOVERS = indexOf('failovers');
const RESCUED = indexOf('rescued');
const PROMPT_TOKENS = indexOf('prompt_tokens');
const COMPLETION_TOKENS = indexOf('completion_tokens');
const COST_USD = indexOf('cost_usd');
const DURATION_MS = indexOf('duration_ms');
const TTFB_MS = indexOf('ttfb_ms');

/** One object, refilled for every row added: `RollupsBuilder` keeps no reference to it. */
const requestMeasures: RequestMeasures = {
  ts: 0, alias: null, key_id: null, status: 0, failovers: 0, rescued: 0, prompt_tokens: null, completion_tokens: null, cost_usd: null, duration_ms: 0, ttfb_ms: null,
};

/** Adds what a stored row (`values[at…]`) adds to the rollups: the request's measures, and its attempts'. */
export function addRowTo(rollups: RollupsBuilder, values: readonly Cell[], at: number, attempts: readonly StoredAttempt[]): void {
  const m = requestMeasures;
  m.ts = cellAt(values, at, TS);
  m.alias = cellAt(values, at, ALIAS);
  m.key_id = cellAt(values, at, KEY_ID);
  m.status = cellAt(values, at, STATUS);
  m.failovers = cellAt(values, at, FAILOVERS);
  m.rescued = cellAt(values, at, RESCUED);
  m.prompt_tokens = cellAt(values, at, PROMPT_TOKENS);
  m.completion_tokens = cellAt(values, at, COMPLETION_TOKENS);
  m.cost_usd = cellAt(values, at, COST_USD);
  m.duration_ms = cellAt(values, at, DURATION_MS);
  m.ttfb_ms = cellAt(values, at, TTFB_MS);
  rollups.addRequest(m);
  visitStoredAttempts(m.ts, m.ttfb_ms, attempts, (a) => rollups.addAttempt(a));
}
