/**
 * The columns of a usage record (`usage_requests`), declared once: each
 * column's name in the table, its kind (column-kinds.ts), whether it may be
 * null, how it is read from the finished request (`RequestRecord`: the field
 * it copies, or a `read` that works it out), and its name in `StoredRequest`
 * and in the usage API's JSON — or why it is not served. Everything else is derived from this list: the column block that
 * carries records to the writer and its reader (record-block.ts), the INSERT
 * on both engines (request-row.ts), the table's type (schema.ts), the query's
 * `StoredRequest` (query-requests.ts), the JSON and its type for the
 * dashboard (usage-json.ts). Adding a column is an entry here and a migration
 * (migrations.ts; request-columns.test.ts checks that the two agree).
 *
 * The list is in the order the usage API's JSON shows the fields; the
 * table's own order is the migrations'.
 */
import type { ItemKind } from './column-kinds.js';
import type { AttemptRecord, PlannedTarget, RequestRecord } from './types.js';

/** Exactly `A` and `B` are the same type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The kinds (and nullability) an item field of type `T` may be declared with. */
type ItemKindsOf<T> = {
  [K in ItemKind]:
    | (Same<T, ItemValues[K]> extends true ? { readonly kind: K; readonly nullable: false } : never)
    | (Same<T, ItemValues[K] | null> extends true ? { readonly kind: K; readonly nullable: true } : never);
}[ItemKind];
interface ItemValues {
  'dictionary-string': string;
  integer: number;
  real: number;
  boolean: boolean;
}

/** One field of a list column's items, as `Item` has it; its name in the JSON. */
export type ItemField<Item> = {
  [F in keyof Item & string]: { readonly field: F; readonly json: string } & ItemKindsOf<Item[F]>;
}[keyof Item & string];

/** A `json` column's items: a list of records with fields of their own (a request's attempts, its plan). */
export interface ListColumn<Item> extends ListShape {
  /** In the order of a stored value list: append new fields, never reorder (stored rows keep the old order). */
  readonly fields: readonly ItemField<Item>[];
}

/** A `ListColumn` of any item type. */
export interface ListShape {
  readonly fields: readonly { readonly field: string; readonly json: string; readonly kind: ItemKind; readonly nullable: boolean }[];
  /** `objects`: each item stored as `{field: value}`; `value lists`: as `[value, …]` in `fields` order (a third of the bytes). */
  readonly stored: 'objects' | 'value lists';
  /** The JSON gives each item its 0-based `position` in the list. */
  readonly numbered: boolean;
}

/** Served columns have a name in `StoredRequest` and one in the JSON; the others say why they are kept. */
type Served = { readonly field: string; readonly json: string } | { readonly internal: string };

/** The kinds (and nullability) a column copied from a record field of type `T` may be declared with. */
type KindsOfField<T> =
  | (Same<T, string> extends true ? { readonly kind: 'text' | 'dictionary-string'; readonly nullable: false } : never)
  | (Same<T, string | null> extends true ? { readonly kind: 'text' | 'dictionary-string'; readonly nullable: true } : never)
  | (Same<T, number> extends true ? { readonly kind: 'integer' | 'real' | 'time'; readonly nullable: false } : never)
  | (Same<T, number | null> extends true ? { readonly kind: 'integer' | 'real' | 'time'; readonly nullable: true } : never)
  | (Same<T, boolean> extends true ? { readonly kind: 'boolean'; readonly nullable: false } : never)
  | (T extends readonly object[] ? { readonly kind: 'json'; readonly nullable: false | 'older rows'; readonly list: ListShape } : never);

/** A column that copies the record's field `field` (its name in `StoredRequest` too). */
type CopiedColumn = {
  [F in keyof RequestRecord]: { readonly name: string; readonly field: F; readonly json: string } & KindsOfField<RequestRecord[F]>;
}[keyof RequestRecord];

type ComputedKind = 'integer' | 'real' | 'boolean';
interface ComputedValues {
  integer: number;
  real: number;
  boolean: boolean;
}

/** A column worked out from the record by `read` (the record has no field for it). */
type ComputedColumn = Served &
  {
    [K in ComputedKind]:
      | { readonly name: string; readonly kind: K; readonly nullable: false; readonly read: (r: RequestRecord) => ComputedValues[K] }
      | { readonly name: string; readonly kind: K; readonly nullable: true; readonly read: (r: RequestRecord) => ComputedValues[K] | null };
  }[ComputedKind];

/** The row id, made by the writer (row-id.ts). */
interface RowIdColumn {
  readonly name: string;
  readonly kind: 'row-id';
  readonly nullable: false;
  readonly field: string;
  readonly json: string;
}

/** One column: a record field it copies, or how it is worked out from the record (`read`), or the row id. */
export type RequestColumn = CopiedColumn | ComputedColumn | RowIdColumn;

/** A request's attempts (its upstream calls), in the `attempts` column. */
export const ATTEMPT_LIST = {
  fields: [
    { field: 'target', json: 'target', kind: 'dictionary-string', nullable: false },
    { field: 'provider', json: 'provider', kind: 'dictionary-string', nullable: false },
    { field: 'model', json: 'model', kind: 'dictionary-string', nullable: false },
    { field: 'outcome', json: 'outcome', kind: 'dictionary-string', nullable: false },
    { field: 'reason', json: 'reason', kind: 'dictionary-string', nullable: false },
    { field: 'upstreamStatus', json: 'upstream_status', kind: 'integer', nullable: true },
    { field: 'durationMs', json: 'duration_ms', kind: 'real', nullable: false },
    { field: 'promptTokens', json: 'prompt_tokens', kind: 'integer', nullable: true },
    { field: 'completionTokens', json: 'completion_tokens', kind: 'integer', nullable: true },
    { field: 'cachedTokens', json: 'cached_tokens', kind: 'integer', nullable: true },
    { field: 'costUsd', json: 'cost_usd', kind: 'real', nullable: true },
    { field: 'failedOver', json: 'failed_over', kind: 'boolean', nullable: false },
  ],
  // Since migration 0013, for every request: lists, not objects (stored-attempts.ts says why).
  stored: 'value lists',
  numbered: true,
} as const satisfies ListColumn<AttemptRecord>;

/** Every planned target of a request with its outcome, skipped ones included, in the `plan` column. */
export const PLAN_LIST = {
  fields: [
    { field: 'target', json: 'target', kind: 'dictionary-string', nullable: false },
    { field: 'outcome', json: 'outcome', kind: 'dictionary-string', nullable: false },
    { field: 'reason', json: 'reason', kind: 'dictionary-string', nullable: false },
  ],
  stored: 'objects',
  numbered: false,
} as const satisfies ListColumn<PlannedTarget>;

/** Attempts that failed over to another target. */
function failoversOf(r: RequestRecord): number {
  let failovers = 0;
  for (const a of r.attempts) if (a.failedOver) failovers++;
  return failovers;
}

export const REQUEST_COLUMNS = [
  // Unique, and sorts by time: the cursor's tie-breaker.
  { name: 'id', kind: 'row-id', nullable: false, field: 'id', json: 'id' },
  // The gateway's X-Request-Id (a client may send its own, so not unique by itself).
  { name: 'request_id', kind: 'text', nullable: false, field: 'requestId', json: 'request_id' },
  { name: 'ts', kind: 'time', nullable: false, field: 'time', json: 'time' },
  // A short, non-reversible fingerprint of the API key used; never the key.
  { name: 'key_fingerprint', kind: 'dictionary-string', nullable: true, field: 'keyFingerprint', json: 'key' },
  // Who called: the key's public id and name (never its secret); null with auth off and on rows older than migration 0016.
  { name: 'key_id', kind: 'dictionary-string', nullable: true, field: 'keyId', json: 'key_id' },
  { name: 'key_name', kind: 'dictionary-string', nullable: true, field: 'keyName', json: 'key_name' },
  { name: 'replica', kind: 'dictionary-string', nullable: true, field: 'replica', json: 'replica' },
  // The OpenTelemetry trace of the request, while tracing is on: a trace leads here and back. Null on rows older than migration 0015.
  { name: 'trace_id', kind: 'text', nullable: true, field: 'traceId', json: 'trace_id' },
  // The inbound API (the gateway's list, dialects/inbound-api.ts); null on rows older than migration 0014.
  { name: 'api', kind: 'dictionary-string', nullable: true, field: 'api', json: 'api' },
  { name: 'alias', kind: 'dictionary-string', nullable: true, field: 'alias', json: 'alias' },
  { name: 'model', kind: 'dictionary-string', nullable: true, field: 'model', json: 'model' },
  { name: 'target', kind: 'dictionary-string', nullable: true, field: 'target', json: 'target' },
  { name: 'provider', kind: 'dictionary-string', nullable: true, field: 'provider', json: 'provider' },
  { name: 'status', kind: 'integer', nullable: false, field: 'status', json: 'status' },
  { name: 'code', kind: 'dictionary-string', nullable: true, field: 'code', json: 'code' },
  { name: 'stream', kind: 'boolean', nullable: false, field: 'stream', json: 'stream' },
  { name: 'priority', kind: 'dictionary-string', nullable: true, field: 'priority', json: 'priority' },
  // How `hedge_after` went (null: not in force, and on rows older than migration 0018); the lost call is among `attempts`.
  { name: 'hedge', kind: 'dictionary-string', nullable: true, field: 'hedge', json: 'hedge' },
  { name: 'attempt_count', kind: 'integer', nullable: false, field: 'attemptCount', json: 'attempts_count' },
  { name: 'failovers', kind: 'integer', nullable: false, field: 'failovers', json: 'failovers', read: failoversOf },
  // Answered successfully after at least one failed-over attempt.
  { name: 'rescued', kind: 'boolean', nullable: false, field: 'rescued', json: 'rescued', read: (r) => failoversOf(r) > 0 && r.status < 400 },
  { name: 'duration_ms', kind: 'real', nullable: false, field: 'durationMs', json: 'duration_ms' },
  { name: 'ttfb_ms', kind: 'real', nullable: true, field: 'ttfbMs', json: 'ttfb_ms' },
  { name: 'prompt_tokens', kind: 'integer', nullable: true, field: 'promptTokens', json: 'prompt_tokens' },
  { name: 'completion_tokens', kind: 'integer', nullable: true, field: 'completionTokens', json: 'completion_tokens' },
  { name: 'cached_tokens', kind: 'integer', nullable: true, field: 'cachedTokens', json: 'cached_tokens' },
  { name: 'cost_usd', kind: 'real', nullable: true, field: 'costUsd', json: 'cost_usd' },
  { name: 'plan', kind: 'json', nullable: false, field: 'plan', json: 'plan', list: PLAN_LIST },
  // Null on rows written before migration 0013, whose attempts are in `usage_attempts` (stored-attempts.ts).
  { name: 'attempts', kind: 'json', nullable: 'older rows', field: 'attempts', json: 'attempts', list: ATTEMPT_LIST },
  {
    name: 'flagged',
    kind: 'boolean',
    nullable: false,
    internal: 'the errors view reads it through a partial index: the request ended in an error (status >= 400) or carries a failed-over attempt',
    read: (r) => r.status >= 400 || failoversOf(r) > 0,
  },
] as const satisfies readonly RequestColumn[];

export type RequestColumnOf = (typeof REQUEST_COLUMNS)[number];
/** The columns served in `StoredRequest` and the usage API. */
export type ServedColumn = Extract<RequestColumnOf, { readonly json: string }>;

/** A stored request as queries return it: one field per served column. */
export type StoredRequest = {
  readonly [C in ServedColumn as C['field']]: C extends { readonly read: (r: RequestRecord) => infer V }
    ? V
    : C extends { readonly field: infer F extends keyof RequestRecord }
      ? RequestRecord[F]
      : string;
};
