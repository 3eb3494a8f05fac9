/**
 * Request records on their way from the request thread to the writer thread,
 * as columns: each record's numbers in typed arrays, its strings as ids into
 * the block's own dictionary (aliases, targets, keys, outcomes and reasons
 * repeat from request to request: a block carries each once), its attempts
 * and planned targets in columns of their own.
 *
 * Why columns: adding a record costs the request thread a few dozen array
 * writes and map lookups (0.4 µs on an idle machine) and leaves nothing for
 * its garbage collector, and a block crosses to the worker as a handful of
 * array copies. Each record as a JSON text cost 2.7 µs to build, more in
 * garbage collection while queued, and a parse in the writer (bench/README.md,
 * fourth and fifth passes).
 *
 * A block is filled by one `RecordBlockBuilder` and never changes once
 * sealed, so a retried batch carries the same rows, row ids included.
 */
import { PROCESS_PART, formatRowId, nextRowSequence } from './row-id.js';
import { finiteOrNull, finiteOrZero, type StoredAttempt } from './stored-attempts.js';
import type { PlannedTarget, RequestRecord } from './types.js';

/** A request's numbers, in this order (NaN stands for null). */
const enum N {
  time, status, stream, attemptCount, durationMs, ttfbMs, promptTokens, completionTokens, cachedTokens, costUsd, sequence,
  // Derived from the record as given (before `status` is made a number a column can hold).
  failovers, rescued, flagged,
  size,
}
/** A request's strings, as dictionary ids (-1 stands for null). */
const enum T {
  keyFingerprint, alias, model, target, provider, code, priority, replica,
  size,
}
/** An attempt's numbers. */
const enum AN {
  upstreamStatus, durationMs, promptTokens, completionTokens, cachedTokens, costUsd, failedOver,
  size,
}
/** An attempt's strings. */
const enum AT {
  target, provider, model, outcome, reason,
  size,
}
/** A planned target's strings. */
const enum PT {
  target, outcome, reason,
  size,
}

export interface RecordBlock {
  readonly count: number;
  /** Row ids are `formatRowId(time, idPrefix, sequence)`: the prefix of the process that made the block. */
  readonly idPrefix: string;
  readonly requestIds: readonly string[];
  readonly numbers: Float64Array;
  readonly texts: Int32Array;
  /** Record i's attempts are entries attemptEnds[i-1] (0 for the first) up to attemptEnds[i]. */
  readonly attemptEnds: Int32Array;
  readonly attemptNumbers: Float64Array;
  readonly attemptTexts: Int32Array;
  readonly planEnds: Int32Array;
  readonly planTexts: Int32Array;
  readonly dictionary: readonly string[];
}

const INITIAL_ROOM = 256;

/** The records of a block from `from` on: what one write stores (the oldest may have been dropped). */
export interface RecordBatch {
  readonly block: RecordBlock;
  readonly from: number;
}

/** Fills one block of up to `capacity` records. */
export class RecordBlockBuilder {
  count = 0;
  private readonly requestIds: string[] = [];
  // Room for a few hundred records at first, doubled as needed: a flush at low
  // traffic seals a block of a handful of records.
  private numbers: Float64Array;
  private texts: Int32Array;
  private attemptEnds: Int32Array;
  private planEnds: Int32Array;
  private attemptNumbers: Float64Array;
  private attemptTexts: Int32Array;
  private planTexts: Int32Array;
  private attempts = 0;
  private planned = 0;
  private readonly ids = new Map<string, number>();
  private readonly dictionary: string[] = [];

  constructor(readonly capacity: number) {
    const room = Math.min(capacity, INITIAL_ROOM);
    this.numbers = new Float64Array(room * N.size);
    this.texts = new Int32Array(room * T.size);
    this.attemptEnds = new Int32Array(room);
    this.planEnds = new Int32Array(room);
    this.attemptNumbers = new Float64Array(room * AN.size);
    this.attemptTexts = new Int32Array(room * AT.size);
    this.planTexts = new Int32Array(room * PT.size);
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
    const attemptsBefore = this.attempts;
    const plannedBefore = this.planned;
    try {
      this.fill(r);
    } catch (error) {
      // `fill` writes the record's own slot and counters last, so these two undo it.
      this.attempts = attemptsBefore;
      this.planned = plannedBefore;
      throw error;
    }
    this.count++;
  }

  private fill(r: RequestRecord): void {
    if (this.count === this.attemptEnds.length) this.grow();
    const i = this.count;
    const n = this.numbers;
    const o = i * N.size;
    n[o + N.time] = finiteOrZero(r.time);
    n[o + N.status] = finiteOrZero(r.status);
    n[o + N.stream] = r.stream ? 1 : 0;
    n[o + N.attemptCount] = finiteOrZero(r.attemptCount);
    n[o + N.durationMs] = finiteOrZero(r.durationMs);
    n[o + N.ttfbMs] = orNaN(r.ttfbMs);
    n[o + N.promptTokens] = orNaN(r.promptTokens);
    n[o + N.completionTokens] = orNaN(r.completionTokens);
    n[o + N.cachedTokens] = orNaN(r.cachedTokens);
    n[o + N.costUsd] = orNaN(r.costUsd);
    const t = this.texts;
    const p = i * T.size;
    t[p + T.keyFingerprint] = this.idOf(r.keyFingerprint);
    t[p + T.alias] = this.idOf(r.alias);
    t[p + T.model] = this.idOf(r.model);
    t[p + T.target] = this.idOf(r.target);
    t[p + T.provider] = this.idOf(r.provider);
    t[p + T.code] = this.idOf(r.code);
    t[p + T.priority] = this.idOf(r.priority);
    t[p + T.replica] = this.idOf(r.replica);
    let failovers = 0;
    for (const a of r.attempts) {
      this.addAttempt(a);
      if (a.failedOver) failovers++;
    }
    n[o + N.failovers] = failovers;
    n[o + N.rescued] = failovers > 0 && r.status < 400 ? 1 : 0;
    n[o + N.flagged] = r.status >= 400 || failovers > 0 ? 1 : 0;
    this.attemptEnds[i] = this.attempts;
    for (const planned of r.plan) this.addPlanned(planned.target, planned.outcome, planned.reason);
    this.planEnds[i] = this.planned;
    // Last, after everything that may throw: a record that threw leaves no request id and uses no row id.
    this.requestIds.push(r.requestId);
    n[o + N.sequence] = nextRowSequence();
  }

  /** The block as filled so far; the builder is not used after this. */
  seal(): RecordBlock {
    const count = this.count;
    return {
      count,
      idPrefix: PROCESS_PART,
      requestIds: this.requestIds,
      // Copies of the used part only: a block sealed early (a flush) carries no unused capacity.
      numbers: this.numbers.slice(0, count * N.size),
      texts: this.texts.slice(0, count * T.size),
      attemptEnds: this.attemptEnds.slice(0, count),
      attemptNumbers: this.attemptNumbers.slice(0, this.attempts * AN.size),
      attemptTexts: this.attemptTexts.slice(0, this.attempts * AT.size),
      planEnds: this.planEnds.slice(0, count),
      planTexts: this.planTexts.slice(0, this.planned * PT.size),
      dictionary: this.dictionary,
    };
  }

  /** Twice the room for records (`attemptEnds.length` is the room). */
  private grow(): void {
    this.numbers = grown(this.numbers);
    this.texts = grown(this.texts);
    this.attemptEnds = grown(this.attemptEnds);
    this.planEnds = grown(this.planEnds);
  }

  private addAttempt(a: RequestRecord['attempts'][number]): void {
    if ((this.attempts + 1) * AN.size > this.attemptNumbers.length) {
      this.attemptNumbers = grown(this.attemptNumbers);
      this.attemptTexts = grown(this.attemptTexts);
    }
    const n = this.attemptNumbers;
    const o = this.attempts * AN.size;
    n[o + AN.upstreamStatus] = orNaN(a.upstreamStatus);
    n[o + AN.durationMs] = finiteOrZero(a.durationMs);
    n[o + AN.promptTokens] = orNaN(a.promptTokens);
    n[o + AN.completionTokens] = orNaN(a.completionTokens);
    n[o + AN.cachedTokens] = orNaN(a.cachedTokens);
    n[o + AN.costUsd] = orNaN(a.costUsd);
    n[o + AN.failedOver] = a.failedOver ? 1 : 0;
    const t = this.attemptTexts;
    const p = this.attempts * AT.size;
    t[p + AT.target] = this.idOf(a.target);
    t[p + AT.provider] = this.idOf(a.provider);
    t[p + AT.model] = this.idOf(a.model);
    t[p + AT.outcome] = this.idOf(a.outcome);
    t[p + AT.reason] = this.idOf(a.reason);
    this.attempts++;
  }

  private addPlanned(target: string, outcome: string, reason: string): void {
    if ((this.planned + 1) * PT.size > this.planTexts.length) this.planTexts = grown(this.planTexts);
    const p = this.planned * PT.size;
    this.planTexts[p + PT.target] = this.idOf(target);
    this.planTexts[p + PT.outcome] = this.idOf(outcome);
    this.planTexts[p + PT.reason] = this.idOf(reason);
    this.planned++;
  }

  private idOf(text: string | null): number {
    if (text === null) return -1;
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.dictionary.length;
      this.dictionary.push(text);
      this.ids.set(text, id);
    }
    return id;
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

/** One record read back from a block: what the writer stores. Attempts and plan as the columns' JSON texts. */
export interface BlockRecord extends Omit<RequestRecord, 'stream' | 'plan' | 'attempts'> {
  readonly id: string;
  /** 1 or 0, as the column holds it. */
  readonly stream: number;
  readonly failovers: number;
  /** 1 when the request answered after a failed-over attempt. */
  readonly rescued: number;
  /** 1 when the request ended in an error or carries a failed-over attempt (the errors view). */
  readonly flagged: number;
  /** `{target, outcome, reason}` objects, as `RequestRecord.plan`. */
  readonly plan: string;
  /** The `attempts` column: `attemptList` as JSON. */
  readonly attempts: string;
  /** Value lists in `StoredAttempt` order (stored-attempts.ts). */
  readonly attemptList: StoredAttempt[];
}

/**
 * Reads records back from a block, as the writer stores them. Keeps the text
 * of each one-entry plan it has made: nearly every request of an alias plans
 * the same target with the same outcome.
 */
export class BlockReader {
  private readonly onePlanTexts = new Map<number, string>();

  constructor(readonly block: RecordBlock) {}

  record(i: number): BlockRecord {
    const block = this.block;
    const n = block.numbers;
    const o = i * N.size;
    const t = block.texts;
    const p = i * T.size;
    const time = n[o + N.time]!;
    const attemptList: StoredAttempt[] = [];
    for (let a = i === 0 ? 0 : block.attemptEnds[i - 1]!; a < block.attemptEnds[i]!; a++) {
      const an = a * AN.size;
      const at = a * AT.size;
      const failedOver = block.attemptNumbers[an + AN.failedOver] === 1 ? 1 : 0;
      attemptList.push([
        this.text(block.attemptTexts[at + AT.target]!)!, this.text(block.attemptTexts[at + AT.provider]!)!, this.text(block.attemptTexts[at + AT.model]!)!,
        this.text(block.attemptTexts[at + AT.outcome]!)!, this.text(block.attemptTexts[at + AT.reason]!)!,
        finiteOrNull(block.attemptNumbers[an + AN.upstreamStatus]!), block.attemptNumbers[an + AN.durationMs]!,
        finiteOrNull(block.attemptNumbers[an + AN.promptTokens]!), finiteOrNull(block.attemptNumbers[an + AN.completionTokens]!),
        finiteOrNull(block.attemptNumbers[an + AN.cachedTokens]!), finiteOrNull(block.attemptNumbers[an + AN.costUsd]!), failedOver,
      ]);
    }
    return {
      id: formatRowId(time, block.idPrefix, n[o + N.sequence]!),
      requestId: block.requestIds[i]!,
      time,
      keyFingerprint: this.text(t[p + T.keyFingerprint]!),
      alias: this.text(t[p + T.alias]!),
      model: this.text(t[p + T.model]!),
      target: this.text(t[p + T.target]!),
      provider: this.text(t[p + T.provider]!),
      status: n[o + N.status]!,
      code: this.text(t[p + T.code]!),
      stream: n[o + N.stream]!,
      priority: this.text(t[p + T.priority]!),
      attemptCount: n[o + N.attemptCount]!,
      durationMs: n[o + N.durationMs]!,
      ttfbMs: finiteOrNull(n[o + N.ttfbMs]!),
      promptTokens: finiteOrNull(n[o + N.promptTokens]!),
      completionTokens: finiteOrNull(n[o + N.completionTokens]!),
      cachedTokens: finiteOrNull(n[o + N.cachedTokens]!),
      costUsd: finiteOrNull(n[o + N.costUsd]!),
      replica: this.text(t[p + T.replica]!),
      failovers: n[o + N.failovers]!,
      rescued: n[o + N.rescued]!,
      flagged: n[o + N.flagged]!,
      plan: this.planText(i === 0 ? 0 : block.planEnds[i - 1]!, block.planEnds[i]!),
      attempts: JSON.stringify(attemptList),
      attemptList,
    };
  }

  private text(id: number): string | null {
    return id < 0 ? null : this.block.dictionary[id]!;
  }

  /** The plan entries from..to as `RequestRecord.plan`'s JSON: `{target, outcome, reason}` objects. */
  private planText(from: number, to: number): string {
    const ids = this.block.planTexts;
    const one = to - from === 1 ? onePlanKey(ids[from * PT.size + PT.target]!, ids[from * PT.size + PT.outcome]!, ids[from * PT.size + PT.reason]!) : -1;
    const known = one >= 0 ? this.onePlanTexts.get(one) : undefined;
    if (known !== undefined) return known;
    const plan: PlannedTarget[] = [];
    for (let e = from; e < to; e++) {
      const q = e * PT.size;
      plan.push({ target: this.text(ids[q + PT.target]!)!, outcome: this.text(ids[q + PT.outcome]!)!, reason: this.text(ids[q + PT.reason]!)! });
    }
    const text = JSON.stringify(plan);
    if (one >= 0) this.onePlanTexts.set(one, text);
    return text;
  }
}

/** Three dictionary ids as one exact number (-1 when one is too large to fit). */
function onePlanKey(target: number, outcome: number, reason: number): number {
  const limit = 2 ** 17;
  if (target < 0 || outcome < 0 || reason < 0 || target >= limit || outcome >= limit || reason >= limit) return -1;
  return (target * limit + outcome) * limit + reason;
}

/** NaN for null and for what a column cannot hold (NaN, ±Infinity, anything not a number): read back as null. */
function orNaN(value: number | null): number {
  return typeof value === 'number' ? value : Number.NaN;
}

function grown<A extends Float64Array | Int32Array>(array: A): A {
  const bigger = new (array.constructor as new (length: number) => A)(array.length * 2);
  bigger.set(array);
  return bigger;
}
