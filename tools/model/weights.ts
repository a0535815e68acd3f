/**
 * @module Weights of the ONNX graph kinds of a model (gate, MLP expert, SwiGLU expert, with
 * an optional pre-MoE RMSNorm and an optional sigmoid output gate) and the initializer
 * names they are stored under.
 *
 * Matrices are row-major with the input dimension first, as ONNX `MatMul(x, W)` expects:
 * gate `[d_model, experts]`, `w1`/`w_gate`/`w_up` `[d_model, d_ff]`, `w2`/`w_down`
 * `[d_ff, d_model]` — the transpose of a PyTorch `Linear.weight` (`[out, in]`).
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";

/** Initializer names of a gate graph (`gate.bias` is optional). */
export const GATE_INITIALIZERS = { weight: "gate.weight", bias: "gate.bias" } as const;

/** Initializer names of an MLP expert (routed or shared) graph. */
export const EXPERT_INITIALIZERS = { w1: "w1", b1: "b1", w2: "w2", b2: "b2" } as const;

/** Initializer names of a SwiGLU expert graph: `down(act(x·w_gate) ⊙ (x·w_up))`. */
export const SWIGLU_INITIALIZERS = { wGate: "w_gate", wUp: "w_up", wDown: "w_down" } as const;

/** Initializer names of the optional RMSNorm in front of any part and of the output gate. */
export const PRELUDE_INITIALIZERS = {
  normWeight: "norm.weight",
  normEpsilon: "norm.epsilon",
  outputGate: "output_gate.weight",
} as const;

/** Expert activation function. */
export type Activation = ModelManifest["activation"];

/** RMSNorm applied to a part's input: `x / sqrt(mean(x²) + epsilon) · weight`. */
export interface NormWeights {
  /** `[dModel]` */
  weight: Float32Array;
  epsilon: number;
}

/** What any part may add around its body: a norm before it. */
export interface PartPrelude {
  /** Applied to the input first (the layer's pre-MoE norm). */
  norm?: NormWeights | undefined;
}

/** Gate of one layer: `logits = norm(x) · weight + bias`. */
export interface GateWeights extends PartPrelude {
  dModel: number;
  experts: number;
  /** `[dModel, experts]` */
  weight: Float32Array;
  /** `[experts]`; absent = no bias (checkpoint routers have none). */
  bias?: Float32Array | undefined;
}

/** Fields every expert has: shape, prelude, and an optional sigmoid output gate. */
interface ExpertCommon extends PartPrelude {
  dModel: number;
  dFf: number;
  /** `[dModel, 1]`: `y = sigmoid(norm(x) · g) · body(norm(x))` (Qwen2-MoE's shared expert). */
  outputGate?: Float32Array | undefined;
}

/** An expert MLP: `y = act(x · w1 + b1) · w2 + b2`. */
export interface MlpExpertWeights extends ExpertCommon {
  kind: "mlp";
  /** `[dModel, dFf]` */
  w1: Float32Array;
  /** `[dFf]` */
  b1: Float32Array;
  /** `[dFf, dModel]` */
  w2: Float32Array;
  /** `[dModel]` */
  b2: Float32Array;
}

/** A SwiGLU expert: `y = (act(x · wGate) ⊙ (x · wUp)) · wDown`. */
export interface SwigluExpertWeights extends ExpertCommon {
  kind: "swiglu";
  /** `[dModel, dFf]` */
  wGate: Float32Array;
  /** `[dModel, dFf]` */
  wUp: Float32Array;
  /** `[dFf, dModel]` */
  wDown: Float32Array;
}

/** One routed or shared expert. */
export type ExpertWeights = MlpExpertWeights | SwigluExpertWeights;

/** Throws a RangeError when the gate arrays do not match their declared shape. */
export function checkGateWeights(gate: GateWeights): void {
  checkLength("gate", GATE_INITIALIZERS.weight, gate.weight, gate.dModel * gate.experts);
  if (gate.bias !== undefined) {
    checkLength("gate", GATE_INITIALIZERS.bias, gate.bias, gate.experts);
  }
  checkPrelude("gate", gate, gate.dModel);
}

/** Throws a RangeError when the expert arrays do not match their declared shape. */
export function checkExpertWeights(expert: ExpertWeights): void {
  const { dModel, dFf } = expert;
  if (expert.kind === "mlp") {
    checkLength("expert", EXPERT_INITIALIZERS.w1, expert.w1, dModel * dFf);
    checkLength("expert", EXPERT_INITIALIZERS.b1, expert.b1, dFf);
    checkLength("expert", EXPERT_INITIALIZERS.w2, expert.w2, dFf * dModel);
    checkLength("expert", EXPERT_INITIALIZERS.b2, expert.b2, dModel);
  } else {
    checkLength("expert", SWIGLU_INITIALIZERS.wGate, expert.wGate, dModel * dFf);
    checkLength("expert", SWIGLU_INITIALIZERS.wUp, expert.wUp, dModel * dFf);
    checkLength("expert", SWIGLU_INITIALIZERS.wDown, expert.wDown, dFf * dModel);
  }
  if (expert.outputGate !== undefined) {
    checkLength("expert", PRELUDE_INITIALIZERS.outputGate, expert.outputGate, dModel);
  }
  checkPrelude("expert", expert, dModel);
}

function checkPrelude(kind: string, part: PartPrelude, dModel: number): void {
  if (part.norm === undefined) return;
  checkLength(kind, PRELUDE_INITIALIZERS.normWeight, part.norm.weight, dModel);
  if (!(part.norm.epsilon > 0)) {
    throw new RangeError(
      `Cannot use ${kind} weights: norm epsilon must be > 0, got ${part.norm.epsilon}`,
    );
  }
}

function checkLength(kind: string, name: string, data: Float32Array, expected: number): void {
  if (data.length !== expected) {
    throw new RangeError(
      `Cannot use ${kind} weights: "${name}" has ${data.length} values, expected ${expected}`,
    );
  }
}
