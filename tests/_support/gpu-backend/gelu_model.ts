/**
 * @module Test support: writes a model directory whose experts are NOT the demo MLP —
 * `Gemm(x, W1ᵀ, b1)` (weights stored `[out, in]`, `transB = 1`) → GELU in its erf form
 * (`0.5·h·(1 + erf(h/√2))`, five ONNX nodes) → `Gemm(·, W2ᵀ, b2)` — written with
 * onnx-proto, and keeps the weights for a float64 oracle. The gate is `Gemm(x, Wg, bg)`.
 */
import { join } from "node:path";
import pkg from "onnx-proto";
import { type ModelManifest, ModelManifestSchema } from "../../../shared/model_manifest.ts";
import { createGaussian, createRandom, gaussianArray } from "../../../tools/model/prng.ts";

const { onnx } = pkg;
const FLOAT = onnx.TensorProto.DataType.FLOAT;

/** One GELU expert's weights, `W` stored `[out, in]`. */
export interface GeluExpert {
  w1: Float32Array;
  b1: Float32Array;
  w2: Float32Array;
  b2: Float32Array;
}

/** The written model: its manifest and every weight, per layer. */
export interface GeluModel {
  manifest: ModelManifest;
  layers: {
    gate: { w: Float32Array; b: Float32Array };
    experts: GeluExpert[];
    shared: GeluExpert[];
  }[];
}

/** Writes the model into `dir`; `options` sizes it. */
export async function writeGeluModel(
  dir: string,
  options: {
    dModel: number;
    dFf: number;
    layers: number;
    experts: number;
    topK: number;
    shared: number;
    seed: number;
  },
): Promise<GeluModel> {
  const manifest = ModelManifestSchema.parse({
    name: "gelu-moe",
    d_model: options.dModel,
    d_ff: options.dFf,
    layers: options.layers,
    experts: options.experts,
    top_k: options.topK,
    shared_experts: options.shared,
  });
  const gaussian = createGaussian(createRandom(options.seed));
  const { dModel: d, dFf: f } = options;
  const expert = (): GeluExpert => ({
    w1: gaussianArray(gaussian, f * d, 1 / Math.sqrt(d)),
    b1: gaussianArray(gaussian, f, 0.1),
    w2: gaussianArray(gaussian, d * f, 0.5 / Math.sqrt(f)),
    b2: gaussianArray(gaussian, d, 0.05),
  });
  const model: GeluModel = { manifest, layers: [] };
  for (let layer = 0; layer < options.layers; layer++) {
    const gate = {
      w: gaussianArray(gaussian, d * options.experts, 1 / Math.sqrt(d)),
      b: gaussianArray(gaussian, options.experts, 0.1),
    };
    const experts = Array.from({ length: options.experts }, expert);
    const shared = Array.from({ length: options.shared }, expert);
    model.layers.push({ gate, experts, shared });
    await Deno.mkdir(join(dir, `layer${layer}`), { recursive: true });
    await Deno.writeFile(join(dir, `layer${layer}/gate.onnx`), gateBytes(gate, d, options.experts));
    for (const [i, e] of experts.entries()) {
      await Deno.writeFile(join(dir, `layer${layer}/expert${i}.onnx`), geluExpertBytes(e, d, f));
    }
    for (const [i, e] of shared.entries()) {
      await Deno.writeFile(join(dir, `layer${layer}/shared${i}.onnx`), geluExpertBytes(e, d, f));
    }
  }
  await Deno.writeTextFile(join(dir, "moe.json"), JSON.stringify(manifest, null, 2));
  return model;
}

/** float64 GELU expert: `W2·gelu(W1·x + b1) + b2` per row of `x` `[rows, d]`. */
export function geluExpertOutput(
  e: GeluExpert,
  x: ArrayLike<number>,
  d: number,
  f: number,
): Float64Array {
  const rows = x.length / d;
  const out = new Float64Array(rows * d);
  const h = new Float64Array(f);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < f; j++) {
      let z = e.b1[j]!;
      for (let i = 0; i < d; i++) z += e.w1[j * d + i]! * x[r * d + i]!;
      h[j] = 0.5 * z * (1 + erf(z / Math.SQRT2));
    }
    for (let o = 0; o < d; o++) {
      let y = e.b2[o]!;
      for (let j = 0; j < f; j++) y += e.w2[o * f + j]! * h[j]!;
      out[r * d + o] = y;
    }
  }
  return out;
}

/** float64 gate logits `x·Wg + bg` of one row. */
export function geluGateLogits(
  gate: { w: Float32Array; b: Float32Array },
  x: ArrayLike<number>,
  d: number,
): Float64Array {
  const experts = gate.b.length;
  const out = Float64Array.from(gate.b);
  for (let i = 0; i < d; i++) {
    for (let e = 0; e < experts; e++) out[e]! += x[i]! * gate.w[i * experts + e]!;
  }
  return out;
}

/** erf(x) to ~1e-15 (series below 3, continued fraction of erfc above). */
export function erf(x: number): number {
  const a = Math.abs(x);
  if (a < 3) {
    let term = a;
    let sum = a;
    for (let n = 1; n < 100; n++) {
      term *= (-a * a) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(a) = exp(-a²)/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + …)))), evaluated backwards.
  let fraction = a;
  for (let k = 60; k >= 1; k--) fraction = a + (k / 2) / fraction;
  return Math.sign(x) * (1 - Math.exp(-a * a) / Math.sqrt(Math.PI) / fraction);
}

function geluExpertBytes(e: GeluExpert, d: number, f: number): Uint8Array {
  const node = (
    opType: string,
    input: string[],
    output: string[],
    attribute: pkg.onnx.IAttributeProto[] = [],
  ) => ({
    opType,
    input,
    output,
    name: output[0],
    attribute,
  });
  const transB = { name: "transB", type: onnx.AttributeProto.AttributeType.INT, i: 1 };
  return encode("gelu_expert", d, d, [
    tensor("fc1.weight", [f, d], e.w1),
    tensor("fc1.bias", [f], e.b1),
    tensor("fc2.weight", [d, f], e.w2),
    tensor("fc2.bias", [d], e.b2),
    tensor("sqrt2", [], Float32Array.of(Math.SQRT2)),
    tensor("one", [], Float32Array.of(1)),
    tensor("half", [], Float32Array.of(0.5)),
  ], [
    node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"], [transB]),
    node("Div", ["h", "sqrt2"], ["h_scaled"]),
    node("Erf", ["h_scaled"], ["h_erf"]),
    node("Add", ["h_erf", "one"], ["h_erf1"]),
    node("Mul", ["h", "h_erf1"], ["h_gelu2"]),
    node("Mul", ["h_gelu2", "half"], ["h_gelu"]),
    node("Gemm", ["h_gelu", "fc2.weight", "fc2.bias"], ["y"], [transB]),
  ]);
}

function gateBytes(
  gate: { w: Float32Array; b: Float32Array },
  d: number,
  experts: number,
): Uint8Array {
  return encode("gate", d, experts, [
    tensor("gate.w", [d, experts], gate.w),
    tensor("gate.b", [experts], gate.b),
  ], [
    { opType: "Gemm", input: ["x", "gate.w", "gate.b"], output: ["y"], name: "gate" },
  ]);
}

function encode(
  name: string,
  inWidth: number,
  outWidth: number,
  initializer: pkg.onnx.ITensorProto[],
  node: pkg.onnx.INodeProto[],
): Uint8Array {
  const info = (n: string, width: number) => ({
    name: n,
    type: {
      tensorType: { elemType: FLOAT, shape: { dim: [{ dimParam: "n" }, { dimValue: width }] } },
    },
  });
  return onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 17 }],
    graph: { name, node, initializer, input: [info("x", inWidth)], output: [info("y", outWidth)] },
  })).finish();
}

function tensor(name: string, dims: number[], data: Float32Array): pkg.onnx.ITensorProto {
  return { name, dims, dataType: FLOAT, rawData: new Uint8Array(data.slice().buffer) };
}
