/**
 * The columns of a usage record (`usage_requests`), declared once: each
 * column's name in the table, its kind (column-kinds.ts), whether it may be
 * null, how it is read from the finished request (`RequestRecord`), and its
 * name in `StoredRequest` and in the usage API's JSON — or why it is not
 * served. Everything else is derived from this list: the column block that
 * carries records to the writer and its reader (record-block.ts), the INSERT
 * on both engines (request-row.ts), the table's type (schema.ts), the query's
 * `StoredRequest` (query-requests.ts), the JSON and its type for the
 * dashboard (usage-json.ts). Adding a column is an entry here and a migration
 * (migrations.ts; request-columns.test.ts checks that the two agree).
 *
 * The list is in the order the usage API's JSON shows the fields; the
 * table's own order is the migrations'.
 */
import type { ColumnKind, ItemKind, Nullability } from './column-kinds.js';
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

type ScalarKind = Exclude<ColumnKind, 'row-id' | 'json'>;
interface ScalarValues {
  text: string;
  'dictionary-string': string;
  integer: number;
  real: number;
  boolean: boolean;
  time: number;
}

/** What a column declaration holds, by kind: `read` returns the kind's value (or null when the column may hold one). */
export type RequestColumn = Served &
  (
    | { readonly name: string; readonly kind: 'row-id'; readonly nullable: false }
    | {
        [K in ScalarKind]:
          | { readonly name: string; readonly kind: K; readonly nullable: false; readonly read: (r: RequestRecord) => ScalarValues[K] }
          | { readonly name: string; readonly kind: K; readonly nullable: true; readonly read: (r: RequestRecord) => ScalarValues[K] | null };
      }[ScalarKind]
    | {
        readonly name: string;
        readonly kind: 'json';
        readonly nullable: Nullability;
        readonly read: (r: RequestRecord) => readonly object[];
        readonly list: ListShape;
      }
  );

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
  { name: 'request_id', kind: 'text', nullable: false, field: 'requestId', json: 'request_id', read: (r) => r.requestId },
  { name: 'ts', kind: 'time', nullable: false, field: 'time', json: 'time', read: (r) => r.time },
  // A short, non-reversible fingerprint of the API key used; never the key.
  { name: 'key_fingerprint', kind: 'dictionary-string', nullable: true, field: 'keyFingerprint', json: 'key', read: (r) => r.keyFingerprint },
  { name: 'replica', kind: 'dictionary-string', nullable: true, field: 'replica', json: 'replica', read: (r) => r.replica },
  { name: 'alias', kind: 'dictionary-string', nullable: true, field: 'alias', json: 'alias', read: (r) => r.alias },
  { name: 'model', kind: 'dictionary-string', nullable: true, field: 'model', json: 'model', read: (r) => r.model },
  { name: 'target', kind: 'dictionary-string', nullable: true, field: 'target', json: 'target', read: (r) => r.target },
  { name: 'provider', kind: 'dictionary-string', nullable: true, field: 'provider', json: 'provider', read: (r) => r.provider },
  { name: 'status', kind: 'integer', nullable: false, field: 'status', json: 'status', read: (r) => r.status },
  { name: 'code', kind: 'dictionary-string', nullable: true, field: 'code', json: 'code', read: (r) => r.code },
  { name: 'stream', kind: 'boolean', nullable: false, field: 'stream', json: 'stream', read: (r) => r.stream },
  { name: 'priority', kind: 'dictionary-string', nullable: true, field: 'priority', json: 'priority', read: (r) => r.priority },
  { name: 'attempt_count', kind: 'integer', nullable: false, field: 'attemptCount', json: 'attempts_count', read: (r) => r.attemptCount },
  { name: 'failovers', kind: 'integer', nullable: false, field: 'failovers', json: 'failovers', read: failoversOf },
  // Answered successfully after at least one failed-over attempt.
  { name: 'rescued', kind: 'boolean', nullable: false, field: 'rescued', json: 'rescued', read: (r) => failoversOf(r) > 0 && r.status < 400 },
  { name: 'duration_ms', kind: 'real', nullable: false, field: 'durationMs', json: 'duration_ms', read: (r) => r.durationMs },
  { name: 'ttfb_ms', kind: 'real', nullable: true, field: 'ttfbMs', json: 'ttfb_ms', read: (r) => r.ttfbMs },
  { name: 'prompt_tokens', kind: 'integer', nullable: true, field: 'promptTokens', json: 'prompt_tokens', read: (r) => r.promptTokens },
  { name: 'completion_tokens', kind: 'integer', nullable: true, field: 'completionTokens', json: 'completion_tokens', read: (r) => r.completionTokens },
  { name: 'cached_tokens', kind: 'integer', nullable: true, field: 'cachedTokens', json: 'cached_tokens', read: (r) => r.cachedTokens },
  { name: 'cost_usd', kind: 'real', nullable: true, field: 'costUsd', json: 'cost_usd', read: (r) => r.costUsd },
  { name: 'plan', kind: 'json', nullable: false, field: 'plan', json: 'plan', read: (r) => r.plan, list: PLAN_LIST },
  // Null on rows written before migration 0013, whose attempts are in `usage_attempts` (stored-attempts.ts).
  { name: 'attempts', kind: 'json', nullable: 'older rows', field: 'attempts', json: 'attempts', read: (r) => r.attempts, list: ATTEMPT_LIST },
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
  readonly [C in ServedColumn as C['field']]: C extends { readonly read: (r: RequestRecord) => infer V } ? V : string;
};
