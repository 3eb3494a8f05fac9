/**
 * Labelled series on the request path at the cost of a few Map lookups.
 *
 * Why: prom-client's bound children (`counter.labels(...)`) still build,
 * validate and hash a label object on every `inc` (~0.4 µs) or `observe`
 * (~0.7 µs); a request touches about seven series, and a string key joined per
 * call to find the child costs as much again (measured: 5 µs of metrics per
 * request). Here a series is found by one Map lookup per label value (no key
 * string is built), and a counter increment is a number added in place: the
 * Counter's `collect` hands the increments to prom-client at scrape time, so
 * the exposition format, names and values stay prom-client's own.
 *
 * Label values are bounded by the callers (targets outside the config are
 * `other`, reasons are cut at their colon), so the trees are bounded too.
 */
import { Counter, type Registry } from 'prom-client';

/** A tree of Maps, one level per label value, holding one `T` per combination. */
export class LabelTree<T> {
  private readonly root = new Map<string, unknown>();

  constructor(private readonly make: (values: readonly string[]) => T) {}

  get(a: string, b?: string, c?: string, d?: string): T {
    if (b === undefined) return (this.root.get(a) as T | undefined) ?? this.add(this.root, a, [a]);
    let level = branch(this.root, a);
    if (c === undefined) return (level.get(b) as T | undefined) ?? this.add(level, b, [a, b]);
    level = branch(level, b);
    if (d === undefined) return (level.get(c) as T | undefined) ?? this.add(level, c, [a, b, c]);
    level = branch(level, c);
    return (level.get(d) as T | undefined) ?? this.add(level, d, [a, b, c, d]);
  }

  /** Forgets the entry under the first label value `a` (for one-label trees). */
  delete(a: string): void {
    this.root.delete(a);
  }

  private add(level: Map<string, unknown>, key: string, values: readonly string[]): T {
    const value = this.make(values);
    level.set(key, value);
    return value;
  }
}

/** The Map under `key` at `level`, made on first use. */
function branch(level: Map<string, unknown>, key: string): Map<string, unknown> {
  let node = level.get(key) as Map<string, unknown> | undefined;
  if (node === undefined) level.set(key, (node = new Map<string, unknown>()));
  return node;
}

/** One counter series: `value` is what the request path adds to; `reported` what prom-client has. */
export interface CounterCell {
  value: number;
  reported: number;
  /** False until prom-client has the series (an increment by 0 creates it, as `inc(0)` would). */
  exported: boolean;
  readonly labels: Record<string, string>;
}

/** The cells of one prom-client Counter. Call `flush()` from the Counter's `collect`. */
export class CounterCells {
  private readonly cells: CounterCell[] = [];
  private readonly tree: LabelTree<CounterCell>;

  constructor(labelNames: readonly string[]) {
    this.tree = new LabelTree((values) => {
      const labels: Record<string, string> = {};
      labelNames.forEach((name, i) => (labels[name] = values[i]!));
      const cell: CounterCell = { value: 0, reported: 0, exported: false, labels };
      this.cells.push(cell);
      return cell;
    });
  }

  /** The series of these label values (in the order of the label names). */
  cell(a: string, b?: string, c?: string, d?: string): CounterCell {
    return this.tree.get(a, b, c, d);
  }

  /**
   * The Counter's `collect` option (prom-client calls it with the Counter as
   * `this` before every scrape): hands what was added since the last scrape over.
   */
  readonly collect = collectorOf(this.cells);

  /**
   * Drops the series of a one-label counter whose label value `keep` refuses
   * (the value names something that is gone): from here and from `counter`.
   */
  retain(keep: (value: string) => boolean, counter: Counter<string>): void {
    for (let i = this.cells.length - 1; i >= 0; i--) {
      const cell = this.cells[i]!;
      const value = Object.values(cell.labels)[0]!;
      if (keep(value)) continue;
      this.cells.splice(i, 1);
      this.tree.delete(value);
      if (cell.exported) counter.remove(cell.labels);
    }
  }
}

/**
 * A Counter registered in `registry` and the cells the request path adds to
 * (the Counter itself is only read by scrapes, through `collect`).
 */
export function counterCells(
  registry: Registry,
  counter: { readonly name: string; readonly help: string; readonly labelNames: readonly string[] },
  beforeCollect?: (cells: CounterCells, counter: Counter<string>) => void,
): CounterCells {
  const cells = new CounterCells(counter.labelNames);
  const collect =
    beforeCollect === undefined
      ? cells.collect
      : function (this: Counter<string>): void {
          beforeCollect(cells, this);
          cells.collect.call(this);
        };
  new Counter({ ...counter, registers: [registry], collect });
  return cells;
}

function collectorOf(cells: readonly CounterCell[]): (this: Counter<string>) => void {
  return function collect(this: Counter<string>): void {
    for (const cell of cells) {
      const added = cell.value - cell.reported;
      if (added > 0 || !cell.exported) {
        this.inc(cell.labels, added);
        cell.reported = cell.value;
        cell.exported = true;
      }
    }
  };
}
