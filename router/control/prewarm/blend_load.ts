/**
 * @module The load a placement is planned on while a pre-warm is in force: per expert the
 * larger of what the balancer observes and what the pre-warm job predicted. The job plans
 * its placement on it and the balancer's ticks judge it, so neither undoes the other.
 */

/**
 * `observed` raised element-wise to `predicted` (`[layer][expert]`); `predicted` when
 * nothing is observed, `observed` when the shapes differ (a model change).
 */
export function blendLoads(
  observed: readonly (readonly number[])[] | null,
  predicted: readonly (readonly number[])[],
): number[][] {
  if (observed === null) return predicted.map((row) => [...row]);
  if (observed.length !== predicted.length) return observed.map((row) => [...row]);
  return observed.map((row, l) => {
    const other = predicted[l]!;
    return other.length === row.length ? row.map((v, e) => Math.max(v, other[e]!)) : [...row];
  });
}
