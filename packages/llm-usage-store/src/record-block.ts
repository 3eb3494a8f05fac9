/**
 * Request records on their way from the request thread to the writer thread,
 * as columns: each record's numbers in typed arrays, its strings as ids into
 * the block's own dictionary (aliases, targets, keys, outcomes and reasons
 * repeat from request to request: a block carries each once), its attempts
 * and planned targets in columns of their own. Which column goes where is
 * derived from the declaration (request-columns.ts, block-layout.ts).
 *
 * Why columns: adding a record costs the request thread a few dozen array
 * writes and map lookups (0.4 µs on an idle machine) and leaves nothing for
 * its garbage collector, and a block crosses to the worker as a handful of
 * array copies. Each record as a JSON text cost 2.7 µs to build, more in
 * garbage collection while queued, and a parse in the writer (bench/README.md,
 * fourth and fifth passes). Plain records cloned to the writer, with rows
 * built there by a loop over the declaration, cost 3.6 µs on the request
 * thread and 16.7 µs on the writer's against the block's 1.9 µs and 2.4 µs
 * (`node bench/usage-writer.mjs --transport`, 2026-12-05; its header has the
 * run): the block is kept for those 16 µs of CPU per request.
 *
 * A block is filled by one `RecordBlockBuilder` and never changes once
 * sealed, so a retried batch carries the same rows, row ids included.
 */
import {
  compileItemFill,
  compileItemRead,
  compileListRead,
  compileRecordFill,
  compileRowRead,
  compileTextsFill,
  type Cell,
  type FillItem,
  type IdSource,
  type ItemsText,
  type ReadItem,
  type ReadList,
} from './block-code.js';
import {
  IDS_PER_RECORD,
  LIST_LAYOUTS,
  NUMBERS_PER_RECORD,
  SEQUENCE_SLOT,
  TEXTS_PER_RECORD,
  type ListLayout,
} from './block-layout.js';
import { ATTEMPT_LIST } from './request-columns.js';
import { PROCESS_PART, formatRowId, nextRowSequence } from './row-id.js';
import type { StoredAttempt } from './stored-attempts.js';
import type { RequestRecord } from './types.js';

/** One list column's items in a block. */
export interface ListBlock {
  /** Record i's items are entries ends[i-1] (0 for the first) up to ends[i]. */
  readonly ends: Int32Array;
  readonly numbers: Float64Array;
  readonly ids: Int32Array;
}

export interface RecordBlock {
  readonly count: number;
  /** Row ids are `formatRowId(time, idPrefix, sequence)`: the prefix of the process that made the block. */
  readonly idPrefix: string;
  /** `NUMBERS_PER_RECORD` per record. */
  readonly numbers: Float64Array;
  /** Dictionary ids, `IDS_PER_RECORD` per record. */
  readonly ids: Int32Array;
  /** The `text` columns' values, `TEXTS_PER_RECORD` per record. */
  readonly texts: readonly unknown[];
  /** One per list column, in declaration order. */
  readonly lists: readonly ListBlock[];
  readonly dictionary: readonly unknown[];
}

const INITIAL_ROOM = 256;

const fillRecord = compileRecordFill();
const fillTexts = compileTextsFill();

/** The records of a block from `from` on: what one write stores (the oldest may have been dropped). */
export interface RecordBatch {
  readonly block: RecordBlock;
  readonly from: number;
}

/** The block's strings, each once. */
class Dictionary implements IdSource {
  readonly values: unknown[] = [];
  private readonly ids = new Map<unknown, number>();

  idOf(value: unknown): number {
    if (value === null) return -1;
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }
}

/** Fills one list column's items, doubling its room as needed. */
class ListBuilder {
  items = 0;
  /** `items` before the record being added (`mark`): what `undo` goes back to. */
  private itemsBefore = 0;
  /** Items there is room for. */
  private room: number;
  ends: Int32Array;
  private numbers: Float64Array;
  private ids: Int32Array;
  private readonly readList: ReadList;
  private readonly fillItem: FillItem;

  constructor(
    private readonly layout: ListLayout,
    room: number,
  ) {
    this.readList = compileListRead(layout);
    this.fillItem = compileItemFill(layout);
    this.room = room;
    this.ends = new Int32Array(room);
    this.numbers = new Float64Array(room * layout.numbersPerItem);
    this.ids = new Int32Array(room * layout.idsPerItem);
  }

  /** Remembers where the record being added starts. */
  mark(): void {
    this.itemsBefore = this.items;
  }

  /** Adds the items of record i, `r` (it throws, part-way, for a value that is not a list: see `undo`). */
  add(i: number, r: RequestRecord, dictionary: Dictionary): void {
    const { numbersPerItem, idsPerItem } = this.layout;
    for (const item of this.readList(r) as Iterable<unknown>) {
      if (this.items === this.room) this.growItems();
      this.fillItem(item, this.numbers, this.items * numbersPerItem, this.ids, this.items * idsPerItem, dictionary);
      this.items++;
    }
    this.ends[i] = this.items;
  }

  /** Takes back the items of the record being added since `mark` (one that threw). */
  undo(): void {
    this.items = this.itemsBefore;
  }

  private growItems(): void {
    this.room *= 2;
    this.numbers = grown(this.numbers);
    this.ids = grown(this.ids);
  }

  growRecords(): void {
    this.ends = grown(this.ends);
  }

  seal(count: number): ListBlock {
    return {
      ends: this.ends.slice(0, count),
      numbers: this.numbers.slice(0, this.items * this.layout.numbersPerItem),
      ids: this.ids.slice(0, this.items * this.layout.idsPerItem),
    };
  }
}

/** Fills one block of up to `capacity` records. */
export class RecordBlockBuilder {
  count = 0;
  // Room for a few hundred records at first, doubled as needed: a flush at low
  // traffic seals a block of a handful of records.
  private room: number;
  private numbers: Float64Array;
  private ids: Int32Array;
  private readonly texts: unknown[] = [];
  private readonly lists: ListBuilder[];
  private readonly dictionary = new Dictionary();

  constructor(readonly capacity: number) {
    this.room = Math.min(capacity, INITIAL_ROOM);
    this.numbers = new Float64Array(this.room * NUMBERS_PER_RECORD);
    this.ids = new Int32Array(this.room * IDS_PER_RECORD);
    this.lists = LIST_LAYOUTS.map((layout) => new ListBuilder(layout, this.room));
  }

  get full(): boolean {
    return this.count >= this.capacity;
  }

  /**
   * Adds a record (the caller checks `full` first). Fields a database column
   * could not hold become null, or 0 where the column needs a number. A record
   * that does not fit the type (a missing list, say) throws and leaves the
   * block as it was.
   */
  add(r: RequestRecord): void {
    for (const list of this.lists) list.mark();
    try {
      this.fill(r);
    } catch (error) {
      // `fill` writes the record's own slots and counters last, so this undoes it.
      for (const list of this.lists) list.undo();
      throw error;
    }
    this.count++;
  }

  private fill(r: RequestRecord): void {
    if (this.count === this.room) this.grow();
    const i = this.count;
    fillRecord(r, this.numbers, i * NUMBERS_PER_RECORD, this.ids, i * IDS_PER_RECORD, this.dictionary);
    for (const list of this.lists) list.add(i, r, this.dictionary);
    // Last, after everything that may throw: a record that threw leaves no text and uses no row id.
    fillTexts(r, this.texts);
    this.numbers[i * NUMBERS_PER_RECORD + SEQUENCE_SLOT] = nextRowSequence();
  }

  /** The block as filled so far; the builder is not used after this. */
  seal(): RecordBlock {
    const count = this.count;
    return {
      count,
      idPrefix: PROCESS_PART,
      // Copies of the used part only: a block sealed early (a flush) carries no unused capacity.
      numbers: this.numbers.slice(0, count * NUMBERS_PER_RECORD),
      ids: this.ids.slice(0, count * IDS_PER_RECORD),
      texts: this.texts,
      lists: this.lists.map((list) => list.seal(count)),
      dictionary: this.dictionary.values,
    };
  }

  /** Twice the room for records. */
  private grow(): void {
    this.room *= 2;
    this.numbers = grown(this.numbers);
    this.ids = grown(this.ids);
    for (const list of this.lists) list.growRecords();
  }
}

/** The records as one batch (for callers outside the batch writer: tests, benchmarks, imports). */
export function recordBatch(records: readonly RequestRecord[]): RecordBatch {
  const builder = new RecordBlockBuilder(Math.max(1, records.length));
  for (const r of records) builder.add(r);
  return { block: builder.seal(), from: 0 };
}

export function batchSize(batch: RecordBatch): number {
  return batch.block.count - batch.from;
}

const NO_ITEMS: ListBlock = { ends: new Int32Array(0), numbers: new Float64Array(0), ids: new Int32Array(0) };

const readRow = compileRowRead();

/** Reads records back from a block as the rows the writer stores. */
export class BlockReader {
  private readonly lists: readonly ListReader[];
  private readonly attempts: ListReader | undefined;
  private readonly rowId: (time: number, sequence: number) => string;

  constructor(readonly block: RecordBlock) {
    this.lists = LIST_LAYOUTS.map((layout, l) => new ListReader(layout, block.lists[l] ?? NO_ITEMS, block.dictionary, layout.shape === ATTEMPT_LIST));
    this.attempts = this.lists.find((list) => list.keepsItems);
    this.rowId = (time, sequence) => formatRowId(time, block.idPrefix, sequence);
  }

  /**
   * Puts record i's cells into `values` from `at` on, in column order (the
   * INSERT's, request-row.ts), and returns its attempts as the `attempts`
   * column's value lists: the rollups count them without parsing its text.
   */
  read(i: number, values: Cell[], at: number): StoredAttempt[] {
    const b = this.block;
    readRow(b.numbers, i * NUMBERS_PER_RECORD, b.ids, i * IDS_PER_RECORD, b.dictionary, b.texts, i * TEXTS_PER_RECORD, this.lists, i, this.rowId, values, at);
    // Value lists in the declared field order, as `StoredAttempt` is derived (stored-attempts.ts).
    return (this.attempts?.items ?? []) as StoredAttempt[];
  }
}

/**
 * Reads one list column's items back, as the column's JSON text
 * (`ListColumn.stored`). Keeps the text of each one-item list it has made
 * whose key is its ids (`ListLayout.keyedByIds`: nearly every request of an
 * alias plans the same target with the same outcome).
 */
class ListReader implements ItemsText {
  /** The items of the record read last, in their stored form (when `keepsItems`). */
  items: unknown[] = [];
  private readonly readItem: ReadItem;
  private readonly keyedTexts = new Map<number, string>();

  constructor(
    readonly layout: ListLayout,
    private readonly list: ListBlock,
    private readonly dictionary: readonly unknown[],
    /** The items are read for every record (the attempts, for the rollups): none come from the text cache. */
    readonly keepsItems: boolean,
  ) {
    this.readItem = compileItemRead(layout);
  }

  text(i: number): string {
    const { layout, list } = this;
    const from = i === 0 ? 0 : (list.ends[i - 1] ?? 0);
    const to = list.ends[i] ?? from;
    const key = to - from === 1 && layout.keyedByIds && !this.keepsItems ? idsKey(list.ids, from * layout.idsPerItem, layout.idsPerItem) : -1;
    const known = key >= 0 ? this.keyedTexts.get(key) : undefined;
    const items: unknown[] = [];
    this.items = items;
    if (known !== undefined) return known;
    for (let e = from; e < to; e++) items.push(this.readItem(list.numbers, e * layout.numbersPerItem, list.ids, e * layout.idsPerItem, this.dictionary));
    const text = JSON.stringify(items);
    if (key >= 0) this.keyedTexts.set(key, text);
    return text;
  }
}

/** Up to three dictionary ids as one exact number (-1 when one is too large to fit). */
function idsKey(ids: Int32Array, at: number, count: number): number {
  const limit = 2 ** 17;
  let key = 0;
  for (let k = 0; k < count; k++) {
    const id = ids[at + k] ?? -1;
    if (id < 0 || id >= limit) return -1;
    key = key * limit + id;
  }
  return key;
}

function grown<A extends Float64Array | Int32Array>(array: A): A {
  const bigger = new (array.constructor as new (length: number) => A)(Math.max(1, array.length * 2));
  bigger.set(array);
  return bigger;
}
