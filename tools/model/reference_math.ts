/**
 * @module Float64 reference math of one model part (gate or expert), the oracle that ONNX
 * Runtime outputs are compared against.
 */
import type { Activation, ExpertWeights, GateWeights } from "./weights.ts";

/** Gate logits `[rows, experts] = x · weight + bias` of `x` `[rows, dModel]`, in float64. */
export function gateLogits(gate: GateWeights, x: ArrayLike<number>, rows: number): Float64Array {
  return affine(x, rows, gate.weight, gate.dModel, gate.experts, gate.bias);
}

/** Expert MLP output `[rows, dModel] = act(x · w1 + b1) · w2 + b2`, in float64. */
export function expertOutput(
  expert: ExpertWeights,
  x: ArrayLike<number>,
  rows: number,
  activation: Activation,
): Float64Array {
  const hidden = affine(x, rows, expert.w1, expert.dModel, expert.dFf, expert.b1);
  for (let i = 0; i < hidden.length; i++) hidden[i] = activate(hidden[i]!, activation);
  return affine(hidden, rows, expert.w2, expert.dFf, expert.dModel, expert.b2);
}

/** `silu(z) = z · sigmoid(z)` or `relu(z) = max(z, 0)`. */
export function activate(z: number, activation: Activation): number {
  return activation === "silu" ? z / (1 + Math.exp(-z)) : Math.max(z, 0);
}

/** `x [rows, inputs] · matrix [inputs, outputs] + bias [outputs]`, accumulated in float64. */
function affine(
  x: ArrayLike<number>,
  rows: number,
  matrix: Float32Array,
  inputs: number,
  outputs: number,
  bias: Float32Array,
): Float64Array {
  if (x.length !== rows * inputs) {
    throw new RangeError(
      `Cannot apply weights: input has ${x.length} values, expected rows * ${inputs} = ${
        rows * inputs
      }`,
    );
  }
  const out = new Float64Array(rows * outputs);
  for (let row = 0; row < rows; row++) {
    const outBase = row * outputs;
    for (let j = 0; j < outputs; j++) out[outBase + j] = bias[j]!;
    for (let i = 0; i < inputs; i++) {
      const value = x[row * inputs + i]!;
      if (value === 0) continue;
      const matrixBase = i * outputs;
      for (let j = 0; j < outputs; j++) out[outBase + j]! += value * matrix[matrixBase + j]!;
    }
  }
  return out;
}
