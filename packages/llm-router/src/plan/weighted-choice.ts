/**
 * Picks an index with probability proportional to its weight, using one draw
 * of `random` in [0, 1). The one place weighted choice is written.
 * Returns -1 for an empty list; items with weight ≤ 0 are never picked unless
 * all are (then the first is).
 */
export function weightedIndex(weights: readonly number[], random: () => number): number {
  if (weights.length === 0) return -1;
  const total = weights.reduce((sum, weight) => sum + Math.max(0, weight), 0);
  if (!(total > 0)) return 0;
  let point = random() * total;
  for (let index = 0; index < weights.length; index++) {
    const weight = Math.max(0, weights[index] ?? 0);
    if (point < weight) return index;
    point -= weight;
  }
  // Floating-point rounding can leave `point` a hair above the last bucket.
  for (let index = weights.length - 1; index >= 0; index--) if ((weights[index] ?? 0) > 0) return index;
  return 0;
}
