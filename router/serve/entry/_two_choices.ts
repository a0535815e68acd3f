/**
 * @module Drawing two distinct candidates uniformly, for the two-choices policies.
 */

function sampleIndex(random: () => number, size: number): number {
  return Math.min(size - 1, Math.floor(random() * size));
}

/** Two distinct indices in `[0, size)` (size ≥ 2): the second draws from the size−1 others. */
export function twoDistinct(random: () => number, size: number): [number, number] {
  const first = sampleIndex(random, size);
  let second = sampleIndex(random, size - 1);
  if (second >= first) second += 1;
  return [first, second];
}
