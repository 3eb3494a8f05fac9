/**
 * The per-record code of a record block (record-block.ts), compiled once,
 * when the module loads, from the block layout (block-layout.ts) into
 * straight-line functions: the builder's copy of a record into the block (on
 * the request thread) and the reader's copy of it into a row's values (on the
 * writer's). Each field is read by its own name and each computed column's
 * `read` called from a call site of its own — the code a hand-written builder
 * and reader would be. Why not loops over the declared columns: there one
 * keyed access reaches every field and one call site calls every `read`,
 * which V8 can neither cache nor inline: copying a record in cost the request
 * thread about twice as much (1.7–1.9 against 0.7–0.9 µs), and reading it back
 * with its rollups the writer about a sixth more.
 *
 * The sources hold nothing but slot numbers from the layout and the declared
 * field names, JSON-quoted; `read` functions are passed in, not written out.
 */
import {
  CARRIED_COLUMNS,
  DICTIONARY_COLUMNS,
  NUMBER_COLUMNS,
  SEQUENCE_SLOT,
  TEXT_COLUMNS,
  TIME_SLOT,
  type CarriedColumn,
  type CarriedField,
  type ListLayout,
} from './block-layout.js';
import type { RequestRecord } from './types.js';

/** The block's dictionary while it is filled: an id for each distinct string, -1 for null. */
export interface IdSource {
  idOf(value: unknown): number;
}

/** Writes a record's numbers from `numbers[o]` and its dictionary ids from `ids[p]` on. */
export type FillRecord = (r: RequestRecord, numbers: Float64Array, o: number, ids: Int32Array, p: number, dictionary: IdSource) => void;
/** Appends a record's `text` columns to `texts`. */
export type FillTexts = (r: RequestRecord, texts: unknown[]) => void;
/** A list column's value in a record. */
export type ReadList = (r: RequestRecord) => unknown;
/** The same for one item of a list column. */
export type FillItem = (item: unknown, numbers: Float64Array, o: number, ids: Int32Array, p: number, dictionary: IdSource) => void;

/** A list column's items as the reader reads them: a record's items as the column's JSON text. */
export interface ItemsText {
  text(record: number): string;
}

export type Cell = string | number | null;

/**
 * Puts a record's cells into `values[k…]`, in declaration order: its numbers
 * from `numbers[o]`, dictionary ids from `ids[p]`, texts from `texts[t]` on;
 * the row id from its time and sequence number; each list as `lists[l].text(i)`.
 */
export type ReadRow = (
  numbers: Float64Array,
  o: number,
  ids: Int32Array,
  p: number,
  dictionary: readonly unknown[],
  texts: readonly unknown[],
  t: number,
  lists: readonly ItemsText[],
  i: number,
  rowId: (time: number, sequence: number) => string,
  values: Cell[],
  k: number,
) => void;
/** One item of a list column in its stored form (`ListColumn.stored`): a value list or an object. */
export type ReadItem = (numbers: Float64Array, o: number, ids: Int32Array, p: number, dictionary: readonly unknown[]) => unknown;

/**
 * `numbers[at] = value` as a column holds it: booleans as 1 or 0 by
 * truthiness; NaN for null and for what a column cannot hold (NaN, ±Infinity,
 * anything not a number), read back as null; 0 where the column must hold a
 * number, for a null there would fail the whole batch, and every retry of it.
 */
function numberLine(at: string, value: string, carried: CarriedField['carried'], nullable: boolean): string {
  if (carried === 'boolean') return `numbers[${at}] = ${value} ? 1 : 0;`;
  return `v = ${value}; numbers[${at}] = typeof v === 'number' && Number.isFinite(v) ? v : ${nullable ? 'NaN' : '0'};`;
}

/** A number read back (NaN reads as null) and a dictionary id read back (-1 reads as null), as expressions. */
const numberAt = (at: string): string => `((v = numbers[${at}]) === v ? v : null)`;
const textAt = (at: string): string => `((id = ids[${at}]) < 0 ? null : dictionary[id])`;

/** The `read` functions a compiled function calls, each under its own name. */
class Reads {
  readonly list: ((r: RequestRecord) => unknown)[] = [];
  /** The column's value in record `r`, as an expression: the field it copies, or its `read` called. */
  of(column: CarriedColumn): string {
    if (column.from === undefined) throw new Error(`column ${column.name} is not read from the record`);
    if ('field' in column.from) return `r[${JSON.stringify(column.from.field)}]`;
    return `read${this.list.push(column.from.read) - 1}(r)`;
  }
}

/** The record's own number and dictionary columns (its texts and lists are copied by the builder). */
export function compileRecordFill(): FillRecord {
  const reads = new Reads();
  const lines = ['let v;'];
  for (const c of NUMBER_COLUMNS) lines.push(numberLine(`o + ${c.slot}`, reads.of(c), c.carried === 'boolean' ? 'boolean' : 'number', c.nullable));
  for (const c of DICTIONARY_COLUMNS) lines.push(`ids[p + ${c.slot}] = dictionary.idOf(${reads.of(c)});`);
  return compiled('r, numbers, o, ids, p, dictionary', lines, reads.list) as FillRecord;
}

export function compileTextsFill(): FillTexts {
  const reads = new Reads();
  return compiled('r, texts', TEXT_COLUMNS.map((c) => `texts.push(${reads.of(c)});`), reads.list) as FillTexts;
}

export function compileListRead(layout: ListLayout): ReadList {
  const reads = new Reads();
  return compiled('r', [`return ${reads.of(layout.column)};`], reads.list) as ReadList;
}

export function compileItemFill(layout: ListLayout): FillItem {
  const lines = ['let v;'];
  for (const f of layout.numberFields) lines.push(numberLine(`o + ${f.slot}`, `item[${JSON.stringify(f.field)}]`, f.carried, f.nullable));
  for (const f of layout.dictionaryFields) lines.push(`ids[p + ${f.slot}] = dictionary.idOf(item[${JSON.stringify(f.field)}]);`);
  return compiled('item, numbers, o, ids, p, dictionary', lines, []) as FillItem;
}

export function compileRowRead(): ReadRow {
  const lines = ['let v, id;'];
  CARRIED_COLUMNS.forEach((c, index) => {
    const into = `values[k + ${index}] = `;
    switch (c.carried) {
      case 'number':
      case 'boolean':
        return lines.push(`${into}${numberAt(`o + ${c.slot}`)};`);
      case 'dictionary':
        return lines.push(`${into}${textAt(`p + ${c.slot}`)};`);
      case 'text':
        return lines.push(`${into}texts[t + ${c.slot}];`);
      case 'row-id':
        return lines.push(`${into}rowId(numbers[o + ${TIME_SLOT}], numbers[o + ${SEQUENCE_SLOT}]);`);
      case 'list':
        return lines.push(`${into}lists[${c.slot}].text(i);`);
    }
  });
  return compiled('numbers, o, ids, p, dictionary, texts, t, lists, i, rowId, values, k', lines, []) as ReadRow;
}

export function compileItemRead(layout: ListLayout): ReadItem {
  const valueOf = (f: CarriedField): string => (f.carried === 'dictionary' ? textAt(`p + ${f.slot}`) : numberAt(`o + ${f.slot}`));
  const item =
    layout.shape.stored === 'value lists'
      ? `[${layout.fields.map(valueOf).join(', ')}]`
      : `{ ${layout.fields.map((f) => `${JSON.stringify(f.field)}: ${valueOf(f)}`).join(', ')} }`;
  return compiled('numbers, o, ids, p, dictionary', ['let v, id;', `return ${item};`], []) as ReadItem;
}

function compiled(parameters: string, lines: readonly string[], reads: readonly ((r: RequestRecord) => unknown)[]): unknown {
  const names = reads.map((_, k) => `read${k}`);
  const make = new Function(...names, `'use strict';\nreturn function (${parameters}) {\n  ${lines.join('\n  ')}\n};`);
  return make(...reads);
}
