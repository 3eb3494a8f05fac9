/**
 * What a usage-record column can hold, and what each kind is in every place a
 * record passes through: its SQL type (the same on SQLite and PostgreSQL), how
 * the column block carries it between threads (record-block.ts), its value in
 * the record and in `StoredRequest`, its cell in the table, and its value in
 * the usage API's JSON. The columns themselves are declared in
 * request-columns.ts; everything here is keyed by kind, never by column.
 *
 * Nothing here imports Node or a database: the dashboard compiles the types
 * derived from it (usage-json.ts).
 */

export type ColumnKind =
  /** The time-sortable row id the writer assigns (row-id.ts); not read from the record. */
  | 'row-id'
  /** A string that differs from record to record (a request id): carried as it is. */
  | 'text'
  /** A string that repeats between records (alias, target, key, reason): carried once per block, as ids. */
  | 'dictionary-string'
  | 'integer'
  | 'real'
  /** 0 or 1 in the column. */
  | 'boolean'
  /** Epoch milliseconds in the column; ISO 8601 text in the JSON. */
  | 'time'
  /** A list of items declared field by field (`ListColumn`), stored as JSON text. */
  | 'json';

/** The kinds a list's items may have: their fields are carried in the list's own block columns. */
export type ItemKind = 'dictionary-string' | 'integer' | 'real' | 'boolean';

/**
 * `true`: the column may hold null; `false`: never. `'older rows'`: every row
 * written now holds a value, rows written before the column existed hold null
 * (the query fills those in from where older versions kept them).
 */
export type Nullability = boolean | 'older rows';

/** The column's type in the schema, as migrations.ts creates it on both engines. */
export const SQL_TYPES = {
  'row-id': 'text',
  text: 'text',
  'dictionary-string': 'text',
  integer: 'integer',
  real: 'double precision',
  boolean: 'integer',
  time: 'bigint',
  json: 'text',
} as const satisfies Record<ColumnKind, string>;

/** A scalar kind's value in a record and in the usage API's JSON alike, `time` aside. */
interface ScalarValues {
  'row-id': string;
  text: string;
  'dictionary-string': string;
  integer: number;
  real: number;
  boolean: boolean;
}

/** A kind's value in a record and in `StoredRequest`, null aside (a list column's comes from its items). */
export interface KindValues extends ScalarValues {
  time: number;
  json: readonly object[];
}

/** A kind's cell in the table, null aside (`time`'s is the schema's bigint-as-number, see schema.ts). */
export interface KindCells {
  'row-id': string;
  text: string;
  'dictionary-string': string;
  integer: number;
  real: number;
  /** 0 or 1: both engines store and compare it the same way. */
  boolean: number;
  time: number;
  json: string;
}

/** A scalar kind's value in the usage API's JSON, null aside (a list's is its items' JSON). */
export interface KindWire extends ScalarValues {
  /** ISO 8601, UTC. */
  time: string;
}

/** An item field's value in a stored list (`ListColumn`), null aside: booleans as 0 or 1, as in a column. */
export interface ItemCells {
  'dictionary-string': string;
  integer: number;
  real: number;
  boolean: 0 | 1;
}

/** What a column of this nullability holds in the table: older rows count as null. */
export type CellNull<N extends Nullability> = N extends false ? never : null;
/** What it holds in `StoredRequest` and the JSON: older rows were filled in. */
export type ValueNull<N extends Nullability> = N extends true ? null : never;
