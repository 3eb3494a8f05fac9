/**
 * A stored request as the usage API answers it (GET /admin/usage/requests and
 * /admin/usage/errors), and its type, both derived from the column
 * declaration (request-columns.ts): one field per served column under its
 * `json` name, times as ISO 8601 text, a list's items under their fields'
 * `json` names (attempts with their position).
 *
 * The dashboard reads these types (`import type` from
 * '@mana/llm-usage-store/usage-json'): this file and the ones it imports use
 * no Node API, so its compiler can check them, and its bundle holds none of it.
 */
import type { ItemKind, KindWire, ValueNull } from './column-kinds.js';
import { ATTEMPT_LIST, PLAN_LIST, REQUEST_COLUMNS, type ListShape, type ServedColumn, type StoredRequest } from './request-columns.js';

/** An item of a list column in the JSON. */
export type ItemJson<L extends ListShape> = {
  readonly [F in L['fields'][number] as F['json']]: KindWire[F['kind'] & ItemKind] | ValueNull<F['nullable']>;
} & (L['numbered'] extends true ? { readonly position: number } : unknown);

type WireOf<C> = C extends { readonly kind: 'json'; readonly list: infer L extends ListShape }
  ? readonly ItemJson<L>[]
  : C extends { readonly kind: infer K extends keyof KindWire; readonly nullable: infer N extends boolean }
    ? KindWire[K] | ValueNull<N>
    : never;

/** One request of the usage API's pages (`data[]`). */
export type UsageRequestJson = { readonly [C in ServedColumn as C['json']]: WireOf<C> };
/** One entry of a request's `attempts`. */
export type UsageAttemptJson = ItemJson<typeof ATTEMPT_LIST>;
/** One entry of a request's `plan`. */
export type UsagePlannedTargetJson = ItemJson<typeof PLAN_LIST>;

const SERVED = REQUEST_COLUMNS.filter((c) => 'json' in c);

/** A stored request as the usage API's JSON, field by field as declared. */
export function requestJson(r: StoredRequest): UsageRequestJson {
  const json: Record<string, unknown> = {};
  for (const column of SERVED) {
    const value = r[column.field];
    if (column.kind === 'time') json[column.json] = new Date(value as number).toISOString();
    else if (column.kind === 'json') json[column.json] = (value as readonly object[]).map((item, position) => itemJson(column.list, item, position));
    else json[column.json] = value;
  }
  // One field per served column, encoded by its kind: the type is derived from the same declaration.
  return json as UsageRequestJson;
}

function itemJson(list: ListShape, item: object, position: number): Record<string, unknown> {
  const json: Record<string, unknown> = list.numbered ? { position } : {};
  for (const field of list.fields) json[field.json] = (item as Record<string, unknown>)[field.field];
  return json;
}
