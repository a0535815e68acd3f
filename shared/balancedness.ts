/**
 * @module How evenly load is spread: balancedness (mean ÷ max, the EPLB measure the
 * balancer compares with `expert_balancer.threshold`) and the coefficient of variation.
 *
 * Balancedness is 1 for a perfectly even spread and 1/n when one of n members carries
 * everything; it is 1 when nothing is loaded (nothing is unbalanced). Both measures are
 * scale-invariant, so tokens/s, token counts and utilisations compare alike.
 */

function checkLoads(loads: readonly number[], measure: string): void {
  for (const [i, load] of loads.entries()) {
    if (!Number.isFinite(load) || load < 0) {
      throw new RangeError(
        `Cannot compute ${measure}: load ${i} must be a finite number >= 0, got ${load}`,
      );
    }
  }
}

/** The largest of `loads` (0 when empty). */
function maxOf(loads: readonly number[]): number {
  let max = 0;
  for (const load of loads) max = Math.max(max, load);
  return max;
}

/** Mean ÷ max of `loads` (all ≥ 0), in (0, 1]; 1 when empty or all zero. */
export function balancedness(loads: readonly number[]): number {
  checkLoads(loads, "balancedness");
  const max = maxOf(loads);
  if (max === 0) return 1;
  // The mean of load ÷ max: equal loads give exactly 1, and tiny or huge loads neither
  // underflow nor overflow.
  let sum = 0;
  for (const load of loads) sum += load / max;
  return Math.min(1, sum / loads.length);
}

/** Population standard deviation ÷ mean of `loads` (all ≥ 0); 0 when empty or all zero. */
export function coefficientOfVariation(loads: readonly number[]): number {
  checkLoads(loads, "coefficient of variation");
  const max = maxOf(loads);
  if (max === 0) return 0;
  // Computed on load ÷ max, which leaves the ratio unchanged and keeps squares finite.
  const scaled = loads.map((load) => load / max);
  const mean = scaled.reduce((sum, load) => sum + load, 0) / scaled.length;
  const variance = scaled.reduce((sum, load) => sum + (load - mean) ** 2, 0) / scaled.length;
  return Math.sqrt(variance) / mean;
}
