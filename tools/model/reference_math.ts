/**
 * @module Float64 reference math of one model part (gate or expert), the oracle that ONNX
 * Runtime outputs are compared against: RMSNorm prelude, gate, MLP and SwiGLU experts,
 * sigmoid output gate, and the activations (with an erf of its own: JavaScript has none).
 */
import type { Activation, ExpertWeights, GateWeights, NormWeights } from "./weights.ts";

/** Gate logits `[rows, experts] = norm(x) · weight + bias` of `x` `[rows, dModel]`, in float64. */
export function gateLogits(gate: GateWeights, x: ArrayLike<number>, rows: number): Float64Array {
  const h = gate.norm ? rmsNorm(x, rows, gate.norm) : x;
  return affine(h, rows, gate.weight, gate.dModel, gate.experts, gate.bias);
}

/** Expert output `[rows, dModel]` of `x` `[rows, dModel]` (MLP or SwiGLU), in float64. */
export function expertOutput(
  expert: ExpertWeights,
  x: ArrayLike<number>,
  rows: number,
  activation: Activation,
): Float64Array {
  const { dModel, dFf } = expert;
  const h = expert.norm ? rmsNorm(x, rows, expert.norm) : x;
  let out: Float64Array;
  if (expert.kind === "mlp") {
    const hidden = affine(h, rows, expert.w1, dModel, dFf, expert.b1);
    for (let i = 0; i < hidden.length; i++) hidden[i] = activate(hidden[i]!, activation);
    out = affine(hidden, rows, expert.w2, dFf, dModel, expert.b2);
  } else {
    const gate = affine(h, rows, expert.wGate, dModel, dFf);
    const up = affine(h, rows, expert.wUp, dModel, dFf);
    for (let i = 0; i < gate.length; i++) gate[i] = activate(gate[i]!, activation) * up[i]!;
    out = affine(gate, rows, expert.wDown, dFf, dModel);
  }
  if (expert.outputGate !== undefined) {
    const logit = affine(h, rows, expert.outputGate, dModel, 1);
    for (let row = 0; row < rows; row++) {
      const factor = 1 / (1 + Math.exp(-logit[row]!));
      for (let c = 0; c < dModel; c++) out[row * dModel + c]! *= factor;
    }
  }
  return out;
}

/** `x / sqrt(mean(x²) + ε) · weight` per row, in float64. */
export function rmsNorm(x: ArrayLike<number>, rows: number, norm: NormWeights): Float64Array {
  const width = norm.weight.length;
  const out = new Float64Array(rows * width);
  for (let row = 0; row < rows; row++) {
    let squares = 0;
    for (let c = 0; c < width; c++) squares += x[row * width + c]! ** 2;
    const inverse = 1 / Math.sqrt(squares / width + Math.fround(norm.epsilon));
    for (let c = 0; c < width; c++) {
      out[row * width + c] = x[row * width + c]! * inverse * norm.weight[c]!;
    }
  }
  return out;
}

/** The activation of one value. */
export function activate(z: number, activation: Activation): number {
  switch (activation) {
    case "silu":
      return z / (1 + Math.exp(-z));
    case "relu":
      return Math.max(z, 0);
    case "gelu":
      return 0.5 * z * (1 + erf(z / Math.SQRT2));
    case "gelu_tanh":
      return 0.5 * z * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (z + 0.044715 * z ** 3)));
  }
}

/**
 * The error function to ~1e-15: its Maclaurin series for |x| < 2.5, else `1 − erfc(x)` with
 * erfc from its continued fraction (Lentz's method), where the series would cancel badly.
 */
export function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  if (a < 2.5) {
    let term = a;
    let sum = a;
    for (let n = 1; n < 80 && Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
      term *= -a * a / n;
      sum += term / (2 * n + 1);
    }
    return sign * (2 / Math.sqrt(Math.PI)) * sum;
  }
  if (a > 6) return sign;
  // erfc(a) = exp(-a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + 2/(a + …)))))
  const tiny = 1e-300;
  let f = a;
  let c = a;
  let d = 0;
  for (let n = 1; n < 200; n++) {
    const coefficient = n / 2;
    d = a + coefficient * d;
    d = Math.abs(d) < tiny ? tiny : d;
    c = a + coefficient / c;
    c = Math.abs(c) < tiny ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return sign * (1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / f);
}

/** `x [rows, inputs] · matrix [inputs, outputs] (+ bias [outputs])`, accumulated in float64. */
function affine(
  x: ArrayLike<number>,
  rows: number,
  matrix: Float32Array,
  inputs: number,
  outputs: number,
  bias?: Float32Array,
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
    if (bias !== undefined) { for (let j = 0; j < outputs; j++) out[outBase + j] = bias[j]!; }
    for (let i = 0; i < inputs; i++) {
      const value = x[row * inputs + i]!;
      if (value === 0) continue;
      const matrixBase = i * outputs;
      for (let j = 0; j < outputs; j++) out[outBase + j]! += value * matrix[matrixBase + j]!;
    }
  }
  return out;
}
