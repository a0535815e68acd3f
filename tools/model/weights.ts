/**
 * @module Weights of the two ONNX graph kinds of a model (gate and expert MLP) and the
 * initializer names they are stored under.
 *
 * Matrices are row-major with the input dimension first, as ONNX `MatMul(x, W)` expects:
 * gate `[d_model, experts]`, `w1` `[d_model, d_ff]`, `w2` `[d_ff, d_model]`.
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";

/** Initializer names of a gate graph. */
export const GATE_INITIALIZERS = { weight: "gate.weight", bias: "gate.bias" } as const;

/** Initializer names of an expert (routed or shared) graph. */
export const EXPERT_INITIALIZERS = { w1: "w1", b1: "b1", w2: "w2", b2: "b2" } as const;

/** Expert activation function. */
export type Activation = ModelManifest["activation"];

/** Gate of one layer: `logits = x · weight + bias`. */
export interface GateWeights {
  dModel: number;
  experts: number;
  /** `[dModel, experts]` */
  weight: Float32Array;
  /** `[experts]` */
  bias: Float32Array;
}

/** One expert MLP: `y = act(x · w1 + b1) · w2 + b2`. */
export interface ExpertWeights {
  dModel: number;
  dFf: number;
  /** `[dModel, dFf]` */
  w1: Float32Array;
  /** `[dFf]` */
  b1: Float32Array;
  /** `[dFf, dModel]` */
  w2: Float32Array;
  /** `[dModel]` */
  b2: Float32Array;
}

/** Throws a RangeError when the gate arrays do not match their declared shape. */
export function checkGateWeights(gate: GateWeights): void {
  checkLength("gate", GATE_INITIALIZERS.weight, gate.weight, gate.dModel * gate.experts);
  checkLength("gate", GATE_INITIALIZERS.bias, gate.bias, gate.experts);
}

/** Throws a RangeError when the expert arrays do not match their declared shape. */
export function checkExpertWeights(expert: ExpertWeights): void {
  checkLength("expert", EXPERT_INITIALIZERS.w1, expert.w1, expert.dModel * expert.dFf);
  checkLength("expert", EXPERT_INITIALIZERS.b1, expert.b1, expert.dFf);
  checkLength("expert", EXPERT_INITIALIZERS.w2, expert.w2, expert.dFf * expert.dModel);
  checkLength("expert", EXPERT_INITIALIZERS.b2, expert.b2, expert.dModel);
}

function checkLength(kind: string, name: string, data: Float32Array, expected: number): void {
  if (data.length !== expected) {
    throw new RangeError(
      `Cannot use ${kind} weights: "${name}" has ${data.length} values, expected ${expected}`,
    );
  }
}
