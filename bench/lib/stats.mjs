// Small statistics helpers: every figure in the report comes through here.

/** The p-th percentile (0–100) of `values`, linear between closest ranks. */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export const median = (values) => percentile(values, 50);

/** Median and p99 of a list of per-round figures. */
export function summarize(values) {
  return { median: median(values), p99: percentile(values, 99), rounds: values.length };
}

/** The mean of `values` and its standard error (the sample standard deviation over √n). */
export function meanWithError(values) {
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / Math.max(1, values.length - 1);
  return { mean, standardError: Math.sqrt(variance / values.length) };
}

/** A ratio rounded for display; undefined when either side is missing. */
export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return undefined;
  return a / b;
}
