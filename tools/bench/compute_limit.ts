/**
 * @module The compute limit a data-plane benchmark is judged against, measured in the
 * same run: single-thread onnxruntime MatMul GFLOP/s at batch 256 on the model's own
 * expert shape (`[256, d_model] · [d_model, d_ff]`), divided by the model's FLOPs per
 * token (counted from its ONNX files) — tokens/s one core can compute.
 *
 * Timed per CPU-second of this process (`/proc/self/stat`), like the serving processes
 * it is compared with: on a machine shared with other work, wall-clock timing would count
 * the time the MatMul waited for a core and lower the limit.
 */
import { join } from "node:path";
import ort from "onnxruntime-node";
import pkg from "onnx-proto";
import { processCpuMs } from "./cpu_time.ts";
import { type ModelManifest, type ModelPart, modelPartPath } from "../../shared/model_manifest.ts";

const { onnx } = pkg;

/** Multiply-add FLOPs per input row of one ONNX file: `2·K·N` per MatMul/Gemm weight `[K, N]`. */
export function flopsPerRow(bytes: Uint8Array): number {
  const graph = onnx.ModelProto.decode(bytes).graph!;
  const shapes = new Map(
    (graph.initializer ?? []).map((t) => [t.name ?? "", (t.dims ?? []).map(Number)]),
  );
  let flops = 0;
  for (const node of graph.node ?? []) {
    if (node.opType !== "MatMul" && node.opType !== "Gemm") continue;
    const dims = shapes.get(node.input?.[1] ?? "");
    if (!dims || dims.length !== 2) continue;
    flops += 2 * dims[0]! * dims[1]!;
  }
  return flops;
}

/** FLOPs one token costs: per layer the gate, `top_k` routed experts and the shared ones. */
export async function modelFlopsPerToken(dir: string, manifest: ModelManifest): Promise<number> {
  const flops = async (part: ModelPart) =>
    flopsPerRow(await Deno.readFile(join(dir, modelPartPath(manifest, part))));
  let total = 0;
  for (let layer = 0; layer < manifest.layers; layer++) {
    total += await flops({ kind: "gate", layer });
    total += manifest.top_k * await flops({ kind: "expert", layer, expert: 0 });
    for (let s = 0; s < manifest.shared_experts; s++) {
      total += await flops({ kind: "shared", layer, expert: s });
    }
  }
  return total;
}

/** Single-thread GFLOP per CPU-second of `[rows, k] · [k, n]` over about `seconds`. */
export async function matmulGflops(
  rows: number,
  k: number,
  n: number,
  seconds = 1.5,
): Promise<number> {
  const weight = Float32Array.from({ length: k * n }, (_, i) => Math.sin(i) * 0.05);
  const model = onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 17 }],
    graph: {
      name: "matmul",
      node: [{ opType: "MatMul", input: ["x", "w"], output: ["y"], name: "matmul" }],
      initializer: [{
        name: "w",
        dims: [k, n],
        dataType: onnx.TensorProto.DataType.FLOAT,
        rawData: new Uint8Array(weight.buffer),
      }],
      input: [info("x", rows, k)],
      output: [info("y", rows, n)],
    },
  })).finish();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ["cpu"],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const x = new ort.Tensor(
    "float32",
    Float32Array.from({ length: rows * k }, (_, i) => Math.cos(i)),
    [rows, k],
  );
  for (let i = 0; i < 5; i++) await session.run({ x });
  let runs = 0;
  const started = performance.now();
  const cpuStarted = processCpuMs("self");
  while (performance.now() - started < seconds * 1000) {
    await session.run({ x });
    runs++;
  }
  const cpuS = Math.max(processCpuMs("self") - cpuStarted, 1) / 1000;
  await session.release();
  return (runs * 2 * rows * k * n) / cpuS / 1e9;
}

function info(name: string, rows: number, cols: number): pkg.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: onnx.TensorProto.DataType.FLOAT,
        shape: { dim: [{ dimValue: rows }, { dimValue: cols }] },
      },
    },
  };
}

/** The limit of a model: the better of its expert's two MatMul shapes (up and down projection). */
export async function computeLimit(dir: string, manifest: ModelManifest) {
  const gflops = Math.max(
    await matmulGflops(256, manifest.d_model, manifest.d_ff),
    await matmulGflops(256, manifest.d_ff, manifest.d_model),
  );
  const flopsPerToken = await modelFlopsPerToken(dir, manifest);
  return { gflops, flopsPerToken, tokensPerS: (gflops * 1e9) / flopsPerToken };
}
