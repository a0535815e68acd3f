/**
 * The stacked layout of a composed layer (`stack_experts.ts`) computes what the split
 * layout computes (≤ 1e-5) for every expert graph kind this repository writes — MLP
 * with each activation, SwiGLU, RMSNorm prelude, output gate, float16 weights — on waves
 * with empty experts and rows chosen by two experts; it refuses graphs it cannot stack,
 * and a refused layer still composes (split) and computes the same.
 */
import assert from "node:assert/strict";
import ort from "onnxruntime-node";
import pkg from "onnx-proto";
import { buildExpertModel } from "../../model/onnx_graphs.ts";
import { createGaussian, createRandom } from "../../model/prng.ts";
import type { Activation, ExpertWeights } from "../../model/weights.ts";
import { composeLayerGraph, LAYER_IO } from "../../../gpu-backend/layer/compose_layer.ts";
import { stackedLayout, stackExpertGraphs } from "./stack_experts.ts";

type LayerLayout = "split" | "stacked";

const { onnx } = pkg;
const D = 8;
const F = 12;

interface Variant {
  name: string;
  kind: "mlp" | "swiglu";
  activation: Activation;
  norm?: boolean;
  outputGate?: boolean;
  half?: boolean;
}

const VARIANTS: Variant[] = [
  { name: "MLP SiLU (the demo's experts)", kind: "mlp", activation: "silu" },
  { name: "MLP ReLU", kind: "mlp", activation: "relu" },
  { name: "MLP GELU (erf)", kind: "mlp", activation: "gelu" },
  { name: "MLP GELU (tanh)", kind: "mlp", activation: "gelu_tanh" },
  { name: "SwiGLU", kind: "swiglu", activation: "silu" },
  {
    name: "MLP with RMSNorm, output gate, float16 weights",
    kind: "mlp",
    activation: "silu",
    norm: true,
    outputGate: true,
    half: true,
  },
  { name: "SwiGLU with RMSNorm", kind: "swiglu", activation: "gelu", norm: true },
];

function expertBytes(variant: Variant, seed: number): Uint8Array {
  const g = createGaussian(createRandom(seed));
  const array = (n: number, scale: number) => Float32Array.from({ length: n }, () => g() * scale);
  const common = {
    dModel: D,
    dFf: F,
    ...(variant.norm ? { norm: { weight: array(D, 0.3).map((v) => 1 + v), epsilon: 1e-5 } } : {}),
    ...(variant.outputGate ? { outputGate: array(D, 0.5) } : {}),
  };
  const weights: ExpertWeights = variant.kind === "mlp"
    ? {
      ...common,
      kind: "mlp",
      w1: array(D * F, 0.4),
      b1: array(F, 0.2),
      w2: array(F * D, 0.3),
      b2: array(D, 0.2),
    }
    : {
      ...common,
      kind: "swiglu",
      wGate: array(D * F, 0.4),
      wUp: array(D * F, 0.4),
      wDown: array(F * D, 0.3),
    };
  return buildExpertModel(weights, variant.activation, {
    weightDtype: variant.half ? "float16" : "float32",
  });
}

/** [row, hosted index, weight]: expert 1 and 4 get nothing, row 2 goes to experts 0 and 3. */
const ASSIGN: [number, number, number][] = [
  [0, 0, 0.6],
  [2, 0, 0.3],
  [1, 2, 1],
  [2, 3, 0.7],
  [3, 3, 0.25],
  [4, 3, 0.5],
  [0, 5, 0.4],
];
const ROWS = 5;
const ENTRY = 3;

async function runLayer(experts: Uint8Array[], layout: LayerLayout, assign = ASSIGN) {
  const bytes = composeLayerGraph({
    dModel: D,
    experts: experts.map((b, id) => ({ id, bytes: b })),
    shared: [],
    ...(layout === "stacked" ? { routedLayout: stackedLayout } : {}),
  });
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ["cpu"],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const g = createGaussian(createRandom(5));
  const rows = Float32Array.from({ length: ROWS * D }, g);
  const sorted = experts.flatMap((_, e) => assign.filter((a) => a[1] === e));
  const out = await session.run({
    [LAYER_IO.rows]: new ort.Tensor("float32", rows, [ROWS, D]),
    [LAYER_IO.residual]: new ort.Tensor("float32", rows.slice(0, ENTRY * D), [ENTRY, D]),
    [LAYER_IO.src]: new ort.Tensor("int32", Int32Array.from(sorted, (a) => a[0]), [sorted.length]),
    [LAYER_IO.counts]: new ort.Tensor(
      "int32",
      Int32Array.from(experts, (_, e) => assign.filter((a) => a[1] === e).length),
      [experts.length],
    ),
    [LAYER_IO.weight]: new ort.Tensor("float32", Float32Array.from(sorted, (a) => a[2]), [
      sorted.length,
      1,
    ]),
  });
  await session.release();
  const ops = (onnx.ModelProto.decode(bytes).graph!.node ?? []).map((n) => n.opType ?? "");
  return {
    routed: out[LAYER_IO.routed]!.data as Float32Array,
    hidden: out[LAYER_IO.hidden]!.data as Float32Array,
    ops,
  };
}

function assertClose(a: Float32Array, b: Float32Array, tolerance: number, what: string): void {
  assert.equal(a.length, b.length);
  for (let i = 0; i < a.length; i++) {
    assert.ok(Math.abs(a[i]! - b[i]!) <= tolerance, `${what} index ${i}: ${a[i]} vs ${b[i]}`);
  }
}

Deno.test("stacked experts equal split experts (≤ 1e-5) for every expert kind the repository writes", async (t) => {
  for (const variant of VARIANTS) {
    await t.step(variant.name, async () => {
      const experts = Array.from({ length: 6 }, (_, e) => expertBytes(variant, 100 + e));
      const split = await runLayer(experts, "split");
      const stacked = await runLayer(experts, "stacked");
      assert.ok(split.ops.includes("Split"));
      assert.ok(!stacked.ops.includes("Split"), "the stacked layout was not used");
      const matmuls = (ops: string[]) => ops.filter((op) => op === "MatMul").length;
      assert.ok(matmuls(stacked.ops) < matmuls(split.ops));
      assertClose(stacked.routed, split.routed, 1e-5, "routed");
      assertClose(stacked.hidden, split.hidden, 1e-5, "hidden");
      // Rows no expert chose get exactly nothing.
      assert.ok(split.routed.some((v) => v !== 0));
      const none = await runLayer(experts, "stacked", []);
      assert.ok(none.routed.every((v) => v === 0));
    });
  }
});

Deno.test("stackExpertGraphs() refuses what it cannot stack; the layer then splits and computes the same", async () => {
  const mlp = VARIANTS[0]!;
  const graph = (bytes: Uint8Array) => onnx.ModelProto.decode(bytes).graph!;
  const a = expertBytes(mlp, 1);
  const b = expertBytes(mlp, 2);
  const swiglu = expertBytes(VARIANTS[4]!, 3);
  const refused = (graphs: pkg.onnx.IGraphProto[]) => {
    const result = stackExpertGraphs(graphs, "X/", "in");
    assert.equal(result.ok, false);
    return result.ok ? "" : result.reason;
  };
  assert.equal(stackExpertGraphs([graph(a), graph(b)], "X/", "in").ok, true);
  assert.match(refused([graph(a), graph(swiglu)]), /differ in structure/);

  // A reduction over rows (axis 0) would mix in padded rows.
  const overRows = (g: pkg.onnx.IGraphProto) => {
    g.node!.push({
      opType: "ReduceMean",
      input: ["y"],
      output: ["y2"],
      attribute: [{ name: "axes", type: onnx.AttributeProto.AttributeType.INTS, ints: [0] }],
    });
    g.node!.forEach((n) => n.output = n.output!.map((o) => (o === "y" ? "y0" : o)));
    g.node!.forEach((n) => n.input = n.input!.map((i) => (i === "y" ? "y0" : i)));
    g.node![g.node!.length - 1]!.output = ["y"];
    return g;
  };
  assert.match(refused([overRows(graph(a)), overRows(graph(b))]), /reduces over rows/);
  const softmaxRows = (g: pkg.onnx.IGraphProto) => {
    const last = g.node![g.node!.length - 1]!;
    last.output = ["pre"];
    g.node!.push({
      opType: "Softmax",
      input: ["pre"],
      output: ["y"],
      attribute: [{ name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
    });
    return g;
  };
  assert.match(refused([softmaxRows(graph(a)), softmaxRows(graph(b))]), /acts over rows/);
  const reshape = (g: pkg.onnx.IGraphProto) => {
    const last = g.node![g.node!.length - 1]!;
    last.output = ["pre"];
    g.initializer!.push({ name: "shape", dataType: 7, dims: [2], int64Data: [-1, D] });
    g.node!.push({ opType: "Reshape", input: ["pre", "shape"], output: ["y"] });
    return g;
  };
  assert.match(refused([reshape(graph(a)), reshape(graph(b))]), /Reshape .* not an op/);

  // Mixed kinds: the stacked layout falls back to split and still computes the same.
  const mixed = [a, swiglu, b, expertBytes(mlp, 4), expertBytes(mlp, 5), expertBytes(mlp, 6)];
  const split = await runLayer(mixed, "split");
  const fallback = await runLayer(mixed, "stacked");
  assert.ok(fallback.ops.includes("Split"));
  assertClose(fallback.routed, split.routed, 0, "routed");
});
