/**
 * Where each declared column (request-columns.ts) travels in a record block
 * (record-block.ts), worked out once when the module loads: numbers (integers,
 * reals, times, and booleans as 0/1) in one Float64Array per block, NaN for
 * null; strings that repeat between records as ids into the block's own
 * dictionary, -1 for null; strings that differ per record as they are; and
 * each list column's items in columns of their own, laid out the same way.
 */
import type { ItemKind } from './column-kinds.js';
import { REQUEST_COLUMNS, type ListShape, type RequestColumnOf } from './request-columns.js';
import type { RequestRecord } from './types.js';

export type Carried =
  /** A number; NaN for null. */
  | 'number'
  /** 1 or 0, read from the record by truthiness. */
  | 'boolean'
  /** An id into the block's dictionary; -1 for null. */
  | 'dictionary'
  /** A string kept as it is. */
  | 'text'
  /** The items of a list column. */
  | 'list'
  /** Made by the reader from the record's time and sequence number. */
  | 'row-id';

export interface CarriedColumn {
  readonly name: RequestColumnOf['name'];
  readonly carried: Carried;
  /** Its place among the block's values of its sort: numbers, dictionary ids, texts or lists. */
  readonly slot: number;
  readonly nullable: boolean;
  /** The record field it copies, or else how it is worked out from the record (the row id is neither: the reader makes it). */
  readonly from: { readonly field: string } | { readonly read: (r: RequestRecord) => unknown } | undefined;
}

export interface CarriedField {
  readonly field: string;
  readonly carried: 'number' | 'boolean' | 'dictionary';
  readonly slot: number;
  readonly nullable: boolean;
}

export interface ListLayout {
  readonly column: CarriedColumn;
  readonly shape: ListShape;
  /** Every field in declared order (a stored value list's order). */
  readonly fields: readonly CarriedField[];
  readonly numberFields: readonly CarriedField[];
  readonly dictionaryFields: readonly CarriedField[];
  /** Numbers and dictionary ids per item. */
  readonly numbersPerItem: number;
  readonly idsPerItem: number;
  /**
   * A one-item list of at most three dictionary fields has a key of one exact
   * number: the reader keeps its JSON text by that key (nearly every request of
   * an alias plans the same target with the same outcome).
   */
  readonly keyedByIds: boolean;
}

function carriedOf(kind: RequestColumnOf['kind'] | ItemKind): Carried {
  switch (kind) {
    case 'integer':
    case 'real':
    case 'time':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'dictionary-string':
      return 'dictionary';
    case 'text':
      return 'text';
    case 'json':
      return 'list';
    case 'row-id':
      return 'row-id';
  }
}

/** Counts the slots of each sort as they are handed out. */
class Slots {
  private readonly next = new Map<string, number>();
  take(sort: string): number {
    const slot = this.next.get(sort) ?? 0;
    this.next.set(sort, slot + 1);
    return slot;
  }
  count(sort: string): number {
    return this.next.get(sort) ?? 0;
  }
}

/** Numbers and booleans share the numbers array. */
const sortOf = (carried: Carried): string => (carried === 'boolean' ? 'number' : carried);

const slots = new Slots();
/** Every column in declaration order: the row's order, and the INSERT's. */
export const CARRIED_COLUMNS: readonly CarriedColumn[] = REQUEST_COLUMNS.map((c) => {
  const carried = carriedOf(c.kind);
  const from = 'read' in c ? { read: c.read } : c.kind === 'row-id' ? undefined : { field: c.field };
  return { name: c.name, carried, slot: slots.take(sortOf(carried)), nullable: c.nullable !== false, from };
});
/** The numbers slot of the record's sequence number (its row id's last part), after the columns'. */
export const SEQUENCE_SLOT = slots.take('number');
export const NUMBERS_PER_RECORD = slots.count('number');
export const IDS_PER_RECORD = slots.count('dictionary');
export const TEXTS_PER_RECORD = slots.count('text');

export const NUMBER_COLUMNS = CARRIED_COLUMNS.filter((c) => c.carried === 'number' || c.carried === 'boolean');
export const DICTIONARY_COLUMNS = CARRIED_COLUMNS.filter((c) => c.carried === 'dictionary');
export const TEXT_COLUMNS = CARRIED_COLUMNS.filter((c) => c.carried === 'text');

/** The numbers slot of the time the row id is made from (the declaration's one `time` column). */
export const TIME_SLOT = slotOfOnly('time');

export const LIST_LAYOUTS: readonly ListLayout[] = CARRIED_COLUMNS.filter((c) => c.carried === 'list').map((column) => {
  const declared = REQUEST_COLUMNS.find((c) => c.name === column.name);
  if (declared === undefined || !('list' in declared)) throw new Error(`list column ${column.name} has no item fields`);
  const itemSlots = new Slots();
  const fields = declared.list.fields.map((f): CarriedField => {
    const carried = carriedOf(f.kind) as CarriedField['carried'];
    return { field: f.field, carried, slot: itemSlots.take(sortOf(carried)), nullable: f.nullable };
  });
  const dictionaryFields = fields.filter((f) => f.carried === 'dictionary');
  return {
    column,
    shape: declared.list,
    fields,
    numberFields: fields.filter((f) => f.carried !== 'dictionary'),
    dictionaryFields,
    numbersPerItem: itemSlots.count('number'),
    idsPerItem: itemSlots.count('dictionary'),
    keyedByIds: dictionaryFields.length === fields.length && fields.length <= 3,
  };
});

function slotOfOnly(kind: RequestColumnOf['kind']): number {
  const columns = REQUEST_COLUMNS.filter((c) => c.kind === kind);
  const column = CARRIED_COLUMNS.find((c) => c.name === columns[0]?.name);
  if (columns.length !== 1 || column === undefined) throw new Error(`the usage record declares ${columns.length} ${kind} columns, not one`);
  return column.slot;
}
