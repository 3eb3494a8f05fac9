/**
 * Requests and errors over time per alias or per key (the Overview's
 * breakdown), for the Overview charts, from the usage API's summary (one
 * summary per time bucket). A bucket that ended more
 * than a settle time ago no longer changes, so it is kept and each refresh
 * asks only for the buckets still open: one or two small queries per poll,
 * not one per bucket.
 */
import { get, query } from './api.js';
import type { Breakdown } from './breakdowns.js';
import type { Summary, SummaryRow } from './types.js';

export interface Window {
  readonly id: string;
  readonly label: string;
  readonly spanMs: number;
  readonly bucketMs: number;
}

const MINUTE = 60_000;
export const WINDOWS: readonly Window[] = [
  { id: '15m', label: '15 min', spanMs: 15 * MINUTE, bucketMs: MINUTE },
  { id: '1h', label: '1 h', spanMs: 60 * MINUTE, bucketMs: 5 * MINUTE },
  { id: '24h', label: '24 h', spanMs: 24 * 60 * MINUTE, bucketMs: 60 * MINUTE },
  { id: '7d', label: '7 d', spanMs: 7 * 24 * 60 * MINUTE, bucketMs: 6 * 60 * MINUTE },
];

/** Records reach the store in batches (about 1 s); a bucket this long closed is final. */
const SETTLE_MS = 10_000; // 10 s
/** Kept buckets, most recent last; old ones are dropped past this many. */
const MAX_CACHED_BUCKETS = 200;

const closedBuckets = new Map<string, SummaryRow[]>();

async function bucketRows(group: Breakdown['group'], start: number, bucketMs: number, now: number, signal: AbortSignal): Promise<SummaryRow[]> {
  const key = `${group}:${bucketMs}:${start}`;
  const kept = closedBuckets.get(key);
  if (kept !== undefined) return kept;
  const answer = await get<Summary>(`/admin/usage/summary${query({ group_by: group, since: start, until: start + bucketMs })}`, signal);
  if (start + bucketMs + SETTLE_MS < now) {
    closedBuckets.set(key, answer.data);
    if (closedBuckets.size > MAX_CACHED_BUCKETS) closedBuckets.delete(closedBuckets.keys().next().value!);
  }
  return answer.data;
}

export interface UsageSeries {
  /** The breakdown these lines are of. */
  readonly group: Breakdown['group'];
  readonly times: number[];
  /** group (an alias, a key id; null: none, see Breakdown.rowId) → requests per bucket */
  readonly requests: Map<string | null, number[]>;
  /** group → errors per bucket */
  readonly errors: Map<string | null, number[]>;
}

/** Buckets are aligned to their size, so the same bucket is the same query on every refresh. */
export async function usageSeries(window: Window, breakdown: Breakdown, signal: AbortSignal, now = Date.now()): Promise<UsageSeries> {
  const last = Math.floor(now / window.bucketMs) * window.bucketMs;
  const count = Math.ceil(window.spanMs / window.bucketMs);
  const times: number[] = [];
  for (let i = count - 1; i >= 0; i -= 1) times.push(last - i * window.bucketMs);
  // A few at a time: the gateway keeps serving traffic meanwhile.
  const rows: SummaryRow[][] = [];
  for (let i = 0; i < times.length; i += 4) {
    rows.push(...(await Promise.all(times.slice(i, i + 4).map((t) => bucketRows(breakdown.group, t, window.bucketMs, now, signal)))));
  }
  const requests = new Map<string | null, number[]>();
  const errors = new Map<string | null, number[]>();
  rows.forEach((bucket, index) => {
    for (const row of bucket) {
      const id = breakdown.rowId(row);
      if (!requests.has(id)) {
        requests.set(id, new Array<number>(times.length).fill(0));
        errors.set(id, new Array<number>(times.length).fill(0));
      }
      requests.get(id)![index] = row.requests;
      errors.get(id)![index] = row.errors;
    }
  });
  return { group: breakdown.group, times, requests, errors };
}
