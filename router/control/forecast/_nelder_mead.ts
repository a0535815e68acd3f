/**
 * @module A small Nelder–Mead minimiser over the unit box, for smoothing parameters.
 *
 * Design: start from the best point of a coarse grid, then run the classic simplex
 * (reflect 1, expand 2, contract ½, shrink ½) with every point clamped to [0, 1]. The
 * objective is an O(n) filter pass, so the evaluation budget (`maxEvaluations`) is the
 * knob that bounds the cost of a fit.
 */

/** Options of {@linkcode minimiseInUnitBox}. */
export interface MinimiseOptions {
  /** Candidate values per dimension for the starting grid. */
  grid: readonly (readonly number[])[];
  /** Objective evaluations after the grid; default 60. */
  maxEvaluations?: number;
  /** Stop when the simplex's values differ by less than this (relative); default 1e-6. */
  tolerance?: number;
}

function clamp01(point: number[]): number[] {
  return point.map((value) => Math.min(1, Math.max(0, value)));
}

/** Every combination of the grid values. */
function gridPoints(grid: readonly (readonly number[])[]): number[][] {
  let points: number[][] = [[]];
  for (const values of grid) points = points.flatMap((point) => values.map((v) => [...point, v]));
  return points;
}

/** The point of [0, 1]^d with the smallest `objective` found; see the module doc. */
export function minimiseInUnitBox(
  objective: (point: readonly number[]) => number,
  options: MinimiseOptions,
): { point: number[]; value: number } {
  // Step 1: coarse grid.
  let best = { point: [] as number[], value: Infinity };
  for (const point of gridPoints(options.grid)) {
    const value = objective(point);
    if (value < best.value) best = { point, value };
  }
  const d = options.grid.length;
  const budget = options.maxEvaluations ?? 60;
  const tolerance = options.tolerance ?? 1e-6;
  if (d === 0 || budget <= 0 || !Number.isFinite(best.value) || best.value === 0) return best;
  // Step 2: simplex around the grid's best point.
  let evaluations = 0;
  const evaluate = (point: number[]) => {
    evaluations++;
    const clamped = clamp01(point);
    return { point: clamped, value: objective(clamped) };
  };
  const simplex = [best];
  for (let i = 0; i < d; i++) {
    const point = [...best.point];
    point[i] = point[i]! + (point[i]! > 0.5 ? -0.1 : 0.1);
    simplex.push(evaluate(point));
  }
  while (evaluations < budget) {
    simplex.sort((a, b) => a.value - b.value);
    const lowest = simplex[0]!;
    const worst = simplex[d]!;
    if (Math.abs(worst.value - lowest.value) <= tolerance * (Math.abs(lowest.value) + 1e-12)) {
      break;
    }
    const centroid = new Array<number>(d).fill(0);
    for (let i = 0; i < d; i++) {
      for (let j = 0; j < d; j++) centroid[j]! += simplex[i]!.point[j]! / d;
    }
    const along = (t: number) => centroid.map((c, j) => c + t * (worst.point[j]! - c));
    const reflected = evaluate(along(-1));
    if (reflected.value < lowest.value) {
      const expanded = evaluate(along(-2));
      simplex[d] = expanded.value < reflected.value ? expanded : reflected;
    } else if (reflected.value < simplex[d - 1]!.value) {
      simplex[d] = reflected;
    } else {
      const contracted = evaluate(along(reflected.value < worst.value ? -0.5 : 0.5));
      if (contracted.value < Math.min(worst.value, reflected.value)) {
        simplex[d] = contracted;
      } else {
        for (let i = 1; i <= d; i++) {
          simplex[i] = evaluate(simplex[i]!.point.map((v, j) => (v + lowest.point[j]!) / 2));
        }
      }
    }
  }
  simplex.sort((a, b) => a.value - b.value);
  return simplex[0]!.value < best.value ? simplex[0]! : best;
}
