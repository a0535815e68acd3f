/**
 * @module Builds the ONNX files of a model (opset 17, IR version 8) from weight arrays.
 *
 * Every graph maps input `x` `[n, d_model]` (dynamic `n`) to output `y`:
 * - optional prelude: `h = x / Sqrt(ReduceMean(x·x) + ε) · norm.weight` (RMSNorm), else `h = x`;
 * - gate: `y = MatMul(h, gate.weight) [+ gate.bias]` → `[n, experts]`;
 * - MLP expert: `y = MatMul(act(MatMul(h, w1) + b1), w2) + b2`;
 * - SwiGLU expert: `y = MatMul(act(MatMul(h, w_gate)) · MatMul(h, w_up), w_down)`;
 * - optional output gate: `y ← Sigmoid(MatMul(h, output_gate.weight)) · y`.
 * Activations: silu `z·Sigmoid(z)`, relu, gelu `0.5·z·(1 + Erf(z/√2))`, gelu_tanh
 * `0.5·z·(1 + Tanh(√(2/π)·(z + 0.044715·z³)))` (opset 17 has no Gelu operator).
 * Matrices are stored as float32, or as float16 followed by a `Cast` to float32 when
 * `weightDtype` is `float16` (half the bytes; vectors always stay float32).
 */
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../shared/model_manifest.ts";
import {
  castToFloat,
  encodeModel,
  type GraphParts,
  intsAttribute,
  node,
  type OnnxNode,
  type OnnxTensor,
  tensor,
  tensorFloat16,
} from "./_onnx_proto.ts";
import {
  type Activation,
  checkExpertWeights,
  checkGateWeights,
  EXPERT_INITIALIZERS,
  type ExpertWeights,
  GATE_INITIALIZERS,
  type GateWeights,
  type PartPrelude,
  PRELUDE_INITIALIZERS,
  SWIGLU_INITIALIZERS,
} from "./weights.ts";

export { ONNX_IR_VERSION, ONNX_OPSET } from "./_onnx_proto.ts";

/** How matrices are stored. */
export interface GraphOptions {
  /** `float32` (default) or `float16` storage of the matrices. */
  weightDtype?: "float32" | "float16";
}

/** Collects a graph's nodes and initializers. */
class GraphBuilder {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxTensor[] = [];
  readonly #half: boolean;

  constructor(options: GraphOptions) {
    this.#half = options.weightDtype === "float16";
  }

  /** Adds a node; returns its (single) output name. */
  add(opType: string, inputs: string[], output: string, attrs?: Parameters<typeof node>[3]) {
    this.nodes.push(node(opType, inputs, [output], attrs));
    return output;
  }

  /** A float32 vector or scalar initializer; returns its name. */
  vector(name: string, dims: number[], data: Float32Array): string {
    this.initializers.push(tensor(name, dims, data));
    return name;
  }

  /** A matrix initializer (float16 + Cast when asked); returns the float32 value's name. */
  matrix(name: string, dims: number[], data: Float32Array): string {
    if (!this.#half) return this.vector(name, dims, data);
    this.initializers.push(tensorFloat16(name, dims, data));
    this.nodes.push(castToFloat(name, `${name}.f32`));
    return `${name}.f32`;
  }

  /** `MatMul(input, weight)`; returns the output name. */
  matmul(input: string, weight: string, output: string): string {
    return this.add("MatMul", [input, weight], output);
  }
}

/** ONNX bytes of a gate graph `x [n, d_model] → y [n, experts]`. */
export function buildGateModel(gate: GateWeights, options: GraphOptions = {}): Uint8Array {
  checkGateWeights(gate);
  const g = new GraphBuilder(options);
  const h = prelude(g, gate, gate.dModel);
  const weight = g.matrix(GATE_INITIALIZERS.weight, [gate.dModel, gate.experts], gate.weight);
  if (gate.bias === undefined) {
    g.matmul(h, weight, ONNX_OUTPUT_NAME);
  } else {
    const bias = g.vector(GATE_INITIALIZERS.bias, [gate.experts], gate.bias);
    g.add("Add", [g.matmul(h, weight, "gate.matmul"), bias], ONNX_OUTPUT_NAME);
  }
  return encode("gate", g, gate.dModel, gate.experts);
}

/** ONNX bytes of an expert graph `x [n, d_model] → y [n, d_model]` (MLP or SwiGLU). */
export function buildExpertModel(
  expert: ExpertWeights,
  activation: Activation,
  options: GraphOptions = {},
): Uint8Array {
  checkExpertWeights(expert);
  const { dModel, dFf } = expert;
  const g = new GraphBuilder(options);
  const h = prelude(g, expert, dModel);
  const body = expert.outputGate === undefined ? ONNX_OUTPUT_NAME : "body";
  if (expert.kind === "mlp") {
    const { w1, b1, w2, b2 } = EXPERT_INITIALIZERS;
    const hidden = g.add("Add", [
      g.matmul(h, g.matrix(w1, [dModel, dFf], expert.w1), "hidden_matmul"),
      g.vector(b1, [dFf], expert.b1),
    ], "hidden");
    const act = activate(g, hidden, activation);
    g.add("Add", [
      g.matmul(act, g.matrix(w2, [dFf, dModel], expert.w2), "out_matmul"),
      g.vector(b2, [dModel], expert.b2),
    ], body);
  } else {
    const { wGate, wUp, wDown } = SWIGLU_INITIALIZERS;
    const gated = activate(
      g,
      g.matmul(h, g.matrix(wGate, [dModel, dFf], expert.wGate), "gate_proj"),
      activation,
    );
    const up = g.matmul(h, g.matrix(wUp, [dModel, dFf], expert.wUp), "up_proj");
    const product = g.add("Mul", [gated, up], "glu");
    g.matmul(product, g.matrix(wDown, [dFf, dModel], expert.wDown), body);
  }
  if (expert.outputGate !== undefined) {
    const weight = g.vector(PRELUDE_INITIALIZERS.outputGate, [dModel, 1], expert.outputGate);
    const gate = g.add("Sigmoid", [g.matmul(h, weight, "output_gate.logit")], "output_gate");
    g.add("Mul", [body, gate], ONNX_OUTPUT_NAME);
  }
  return encode("expert", g, dModel, dModel);
}

/** The RMSNorm prelude when the part has one; returns the name of the body's input. */
function prelude(g: GraphBuilder, part: PartPrelude, dModel: number): string {
  if (part.norm === undefined) return ONNX_INPUT_NAME;
  const x = ONNX_INPUT_NAME;
  const { normWeight, normEpsilon } = PRELUDE_INITIALIZERS;
  const meanSquare = g.add(
    "ReduceMean",
    [g.add("Mul", [x, x], "norm.square")],
    "norm.mean_square",
    [intsAttribute("axes", [-1])],
  );
  const epsilon = g.vector(normEpsilon, [], Float32Array.of(part.norm.epsilon));
  const rms = g.add("Sqrt", [g.add("Add", [meanSquare, epsilon], "norm.variance")], "norm.rms");
  const unit = g.add("Div", [x, rms], "norm.unit");
  return g.add("Mul", [unit, g.vector(normWeight, [dModel], part.norm.weight)], "normed");
}

/** `act(z)` as nodes; returns the output name. */
function activate(g: GraphBuilder, z: string, activation: Activation): string {
  const scalar = (name: string, value: number) =>
    g.vector(`act.${name}`, [], Float32Array.of(value));
  switch (activation) {
    case "relu":
      return g.add("Relu", [z], `${z}.relu`);
    case "silu":
      return g.add("Mul", [z, g.add("Sigmoid", [z], `${z}.sigmoid`)], `${z}.silu`);
    case "gelu": {
      const erf = g.add("Erf", [
        g.add("Mul", [z, scalar("inv_sqrt2", Math.SQRT1_2)], `${z}.scaled`),
      ], `${z}.erf`);
      const onePlus = g.add("Add", [erf, scalar("one", 1)], `${z}.one_plus`);
      const half = g.add("Mul", [z, scalar("half", 0.5)], `${z}.half`);
      return g.add("Mul", [half, onePlus], `${z}.gelu`);
    }
    case "gelu_tanh": {
      const cube = g.add("Mul", [g.add("Mul", [z, z], `${z}.square`), z], `${z}.cube`);
      const inner = g.add(
        "Add",
        [z, g.add("Mul", [cube, scalar("c", 0.044715)], `${z}.cubic`)],
        `${z}.inner`,
      );
      const scaled = g.add(
        "Mul",
        [inner, scalar("sqrt_2_over_pi", Math.sqrt(2 / Math.PI))],
        `${z}.scaled`,
      );
      const onePlus = g.add(
        "Add",
        [g.add("Tanh", [scaled], `${z}.tanh`), scalar("one", 1)],
        `${z}.one_plus`,
      );
      const half = g.add("Mul", [z, scalar("half", 0.5)], `${z}.half`);
      return g.add("Mul", [half, onePlus], `${z}.gelu`);
    }
  }
}

function encode(name: string, g: GraphBuilder, inputWidth: number, outputWidth: number) {
  // Scalars shared by several nodes are declared once.
  const seen = new Set<string>();
  const initializers = g.initializers.filter((t) => !seen.has(t.name!) && seen.add(t.name!));
  const parts: GraphParts = { inputWidth, outputWidth, initializers, nodes: g.nodes };
  return encodeModel(name, parts);
}
