/**
 * @module Gather token rows for one expert and scatter-add its weighted outputs back.
 *
 * With an `ExpertAssignment` from `groupRowsByExpert`, a MoE layer is
 * `for each expert: out += scatter(weights · expert(gather(h)))`; these helpers are the
 * gather and the weighted scatter-add, over row-major `[rows, width]` matrices.
 */
import type { ExpertAssignment } from "./routing.ts";

/** Copies the given rows of a row-major `[*, width]` matrix into a new `[rows.length, width]`. */
export function gatherRows(source: Float32Array, width: number, rows: Int32Array): Float32Array {
  const gathered = new Float32Array(rows.length * width);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (row < 0 || (row + 1) * width > source.length) {
      throw new RangeError(`Cannot gather rows: row ${row} is outside the source matrix`);
    }
    gathered.set(source.subarray(row * width, (row + 1) * width), i * width);
  }
  return gathered;
}

/**
 * Adds `weights[positions[i]] * values[i]` to row `rows[i]` of `target` for every row `i`
 * of `values` (`[assignment.rows.length, width]`), where `weights` is the routing weights.
 */
export function scatterAddWeighted(
  target: Float32Array | Float64Array,
  width: number,
  values: Float32Array | Float64Array,
  assignment: ExpertAssignment,
  weights: Float32Array,
): void {
  const { rows, positions } = assignment;
  if (values.length !== rows.length * width) {
    throw new RangeError(
      `Cannot scatter expert outputs: values length ${values.length} is not rows * width = ${
        rows.length * width
      }`,
    );
  }
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    if (row < 0 || (row + 1) * width > target.length) {
      throw new RangeError(
        `Cannot scatter expert outputs: row ${row} is outside the target matrix`,
      );
    }
    const weight = weights[positions[i]!]!;
    const targetBase = row * width;
    const valueBase = i * width;
    for (let c = 0; c < width; c++) target[targetBase + c]! += weight * values[valueBase + c]!;
  }
}
