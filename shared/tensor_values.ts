/**
 * @module JSON tensor `data` to FP32: flattened iteratively (an explicit stack, never
 * recursion or `Array.flat(Infinity)`, whose cost and stack depth the sender chooses),
 * stopping as soon as more values arrive than the shape allows, and checking each value
 * is a number FP32 can hold: finite and |x| ≤ 3.4028235e38 (beyond it FP32 is ±Infinity).
 */

/** Largest magnitude an FP32 value may be given as (FLT_MAX written with 8 digits). */
export const FP32_MAX = 3.4028235e38;

/** Why a `data` array was refused; `message` names the field. */
export class TensorValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TensorValueError";
  }
}

function describe(value: unknown): string {
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return "an array";
  const json = JSON.stringify(value);
  return json.length > 40 ? `${json.slice(0, 40)}…` : json;
}

/**
 * Flattens nested `data` into `expected` FP32 values in row-major order; throws
 * {@linkcode TensorValueError} naming `field[i]` (the flat index) or the count.
 */
export function flattenFp32(
  data: readonly unknown[],
  field: string,
  expected: number,
): Float32Array {
  const out = new Float32Array(expected);
  let count = 0;
  // Frames of (array, next index); the stack is as deep as the data, which the body's
  // depth limit bounds, and lives on the heap either way.
  const arrays: (readonly unknown[])[] = [data];
  const indices: number[] = [0];
  while (arrays.length > 0) {
    const top = arrays.length - 1;
    const array = arrays[top]!;
    const index = indices[top]!;
    if (index >= array.length) {
      arrays.pop();
      indices.pop();
      continue;
    }
    indices[top] = index + 1;
    const value = array[index];
    if (Array.isArray(value)) {
      arrays.push(value);
      indices.push(0);
      continue;
    }
    if (count >= expected) {
      throw new TensorValueError(
        `${field} has more than ${expected} values, expected ${expected} (product of shape)`,
      );
    }
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new TensorValueError(
        `${field}[${count}] must be a finite number, got ${describe(value)}`,
      );
    }
    if (value > FP32_MAX || value < -FP32_MAX) {
      throw new TensorValueError(
        `${field}[${count}] is ${value}, beyond FP32's range (|x| ≤ ${FP32_MAX})`,
      );
    }
    out[count++] = value;
  }
  if (count !== expected) {
    throw new TensorValueError(
      `${field} has ${count} values, expected ${expected} (product of shape)`,
    );
  }
  return out;
}
