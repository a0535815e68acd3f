/**
 * @module Statistics of a load or selection distribution beyond balancedness and CV
 * (those live in `shared/balancedness.ts`): the share carried by the hottest
 * members, and how concentrated a distribution is.
 */

function total(values: readonly number[]): number {
  let sum = 0;
  for (const value of values) {
    if (!Number.isFinite(value) || value < 0) {
      throw new RangeError(`Cannot compute load statistics: values must be finite and >= 0`);
    }
    sum += value;
  }
  return sum;
}

/**
 * Share of the total carried by the hottest `ceil(fraction · n)` members, in [0, 1];
 * 0 when nothing is loaded. With 32 experts and `fraction` 0.1 that is the top 4.
 */
export function topShare(values: readonly number[], fraction = 0.1): number {
  if (!(fraction > 0 && fraction <= 1)) {
    throw new RangeError(`Cannot compute top share: fraction must be in (0, 1], got ${fraction}`);
  }
  const sum = total(values);
  if (sum === 0) return 0;
  const count = Math.max(1, Math.ceil(fraction * values.length));
  const top = [...values].sort((a, b) => b - a).slice(0, count);
  return top.reduce((acc, value) => acc + value, 0) / sum;
}

/**
 * Concentration of a distribution: `1 − H(p) / ln(n)` with `H` the Shannon entropy of
 * the normalised values. 0 = spread evenly over all `n` members, 1 = everything on one;
 * 0 when nothing is loaded or `n` ≤ 1.
 */
export function concentration(values: readonly number[]): number {
  const sum = total(values);
  if (sum === 0 || values.length <= 1) return 0;
  let entropy = 0;
  for (const value of values) {
    const p = value / sum;
    if (p > 0) entropy -= p * Math.log(p); // p underflows to 0 for subnormal values
  }
  return Math.min(1, Math.max(0, 1 - entropy / Math.log(values.length)));
}

/** The values normalised to shares summing to 1 (all zero stays all zero). */
export function shares(values: readonly number[]): number[] {
  const sum = total(values);
  return values.map((value) => sum === 0 ? 0 : value / sum);
}
