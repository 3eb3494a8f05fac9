/**
 * Log-scale histograms of durations (ms), the form in which the rollups keep
 * them: p50/p95 of a window come from merged bucket counts instead of from every
 * row. Bins are fixed so any two histograms add up bin by bin: 16 per doubling
 * above 0.01 ms, so a percentile read back as its bin's geometric middle is
 * within ±2.2 % (2^(1/32) − 1) of the exact nearest-rank value; values under
 * 0.01 ms share bin 0 and read back as 0.
 */

const SMALLEST_MS = 0.01;
const BINS_PER_DOUBLING = 16;
/** 0.01 ms × 2^(600/16) ≈ 2 × 10⁹ ms (23 days): nothing the gateway times lasts longer. */
const LAST_BIN = 600;

/** Counts by bin index (dense: merging thousands of stored histograms stays a loop over arrays). */
export type Histogram = Float64Array;

export function emptyHistogram(): Histogram {
  return new Float64Array(LAST_BIN + 1);
}

/** The relative error bound of a percentile read from a histogram: half a bin. */
export const HISTOGRAM_RELATIVE_ERROR = 2 ** (1 / (2 * BINS_PER_DOUBLING)) - 1;

export function binOf(ms: number): number {
  if (!(ms >= SMALLEST_MS)) return 0; // also NaN
  return Math.min(LAST_BIN, 1 + Math.floor(BINS_PER_DOUBLING * Math.log2(ms / SMALLEST_MS)));
}

/** The geometric middle of a bin, rounded to the microsecond. */
export function valueOf(bin: number): number {
  if (bin === 0) return 0;
  return Math.round(SMALLEST_MS * 2 ** ((bin - 0.5) / BINS_PER_DOUBLING) * 1_000) / 1_000;
}

export function addHistogram(into: Histogram, from: Histogram): void {
  for (let bin = 0; bin <= LAST_BIN; bin++) into[bin]! += from[bin]!;
}

export function isEmpty(h: Histogram): boolean {
  return h.every((count) => count === 0);
}

/** Stored sparse, as a JSON array of bin, count pairs in bin order: `[197,3,201,1]`. */
export function encodeHistogram(h: Histogram): string {
  const flat: number[] = [];
  for (let bin = 0; bin <= LAST_BIN; bin++) if (h[bin] !== 0) flat.push(bin, h[bin]!);
  return JSON.stringify(flat);
}

/** Adds a stored histogram into `into` (a fresh one by default). */
export function decodeHistogram(text: string, into: Histogram = emptyHistogram()): Histogram {
  const flat = JSON.parse(text) as number[];
  for (let i = 0; i + 1 < flat.length; i += 2) into[flat[i]!]! += flat[i + 1]!;
  return into;
}

/** Nearest rank (the value at rank ⌈p/100 × n⌉) as its bin's middle; null when empty. */
export function percentiles(h: Histogram): { p50: number | null; p95: number | null } {
  let n = 0;
  for (let bin = 0; bin <= LAST_BIN; bin++) n += h[bin]!;
  if (n === 0) return { p50: null, p95: null };
  const at = (p: number): number => {
    const rank = Math.max(1, Math.ceil((p * n) / 100));
    let seen = 0;
    for (let bin = 0; bin <= LAST_BIN; bin++) {
      seen += h[bin]!;
      if (seen >= rank) return valueOf(bin);
    }
    return valueOf(LAST_BIN);
  };
  return { p50: at(50), p95: at(95) };
}
