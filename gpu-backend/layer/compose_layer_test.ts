import assert from "node:assert/strict";
import { join } from "node:path";
import ort from "onnxruntime-node";
import pkg from "onnx-proto";
import { createGaussian, createRandom } from "../../tools/model/prng.ts";
import {
  geluExpertOutput,
  geluGateLogits,
  writeGeluModel,
} from "../../tests/_support/gpu-backend/gelu_model.ts";
import { composeLayerGraph, LAYER_IO } from "./compose_layer.ts";

const D = 8;
const F = 12;
const E = 5;

async function geluLayer() {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-compose-" });
  const model = await writeGeluModel(dir, {
    dModel: D,
    dFf: F,
    layers: 2,
    experts: E,
    topK: 2,
    shared: 1,
    seed: 3,
  });
  const read = (path: string) => Deno.readFile(join(dir, path));
  return { dir, model, read };
}

async function session(bytes: Uint8Array): Promise<ort.InferenceSession> {
  return await ort.InferenceSession.create(bytes, {
    executionProviders: ["cpu"],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
}

interface Case {
  name: string;
  hosted: number[];
  rows: number;
  entry: number;
  /** [row, expert, weight] */
  assign: [number, number, number][];
}

const CASES: Case[] = [
  {
    name: "entry rows, some experts with no rows",
    hosted: [0, 1, 2, 3, 4],
    rows: 4,
    entry: 4,
    assign: [[0, 1, 0.7], [0, 3, 0.3], [2, 1, 0.5], [3, 4, 1]],
  },
  {
    name: "a row chosen by two hosted experts gets both",
    hosted: [0, 1, 2, 3, 4],
    rows: 2,
    entry: 2,
    assign: [[1, 0, 0.4], [1, 2, 0.6]],
  },
  {
    name: "peer rows only (no entry rows)",
    hosted: [1, 3],
    rows: 3,
    entry: 0,
    assign: [[0, 3, 0.25], [1, 1, 1], [2, 3, 0.5]],
  },
  {
    name: "entry and peer rows together",
    hosted: [0, 4],
    rows: 5,
    entry: 2,
    assign: [[0, 4, 0.5], [3, 0, 0.2], [4, 4, 1]],
  },
  { name: "no assignments at all", hosted: [0, 1, 2, 3, 4], rows: 3, entry: 3, assign: [] },
  { name: "one hosted expert", hosted: [2], rows: 2, entry: 1, assign: [[1, 2, 0.9]] },
  { name: "no hosted expert", hosted: [], rows: 2, entry: 2, assign: [] },
  { name: "no rows", hosted: [0, 1], rows: 0, entry: 0, assign: [] },
];

Deno.test("composeLayerGraph() equals the experts one by one: Gemm + bias + GELU (erf) experts, shared expert, fused gate", async (t) => {
  const { dir, model, read } = await geluLayer();
  const gaussian = createGaussian(createRandom(11));
  const layer = model.layers[0]!;
  try {
    for (const c of CASES) {
      await t.step(c.name, async () => {
        const bytes = composeLayerGraph({
          dModel: D,
          experts: await Promise.all(
            c.hosted.map(async (id) => ({ id, bytes: await read(`layer0/expert${id}.onnx`) })),
          ),
          shared: [await read("layer0/shared0.onnx")],
          nextGate: { bytes: await read("layer1/gate.onnx"), experts: E },
        });
        const s = await session(bytes);
        const rows = Float32Array.from({ length: c.rows * D }, gaussian);
        const residual = Float32Array.from({ length: c.entry * D }, gaussian);
        // The graph wants assignments grouped by hosting order.
        const sorted = c.hosted.flatMap((e) => c.assign.filter((a) => a[1] === e));
        const out = await s.run({
          [LAYER_IO.rows]: new ort.Tensor("float32", rows, [c.rows, D]),
          [LAYER_IO.residual]: new ort.Tensor("float32", residual, [c.entry, D]),
          [LAYER_IO.src]: new ort.Tensor("int32", Int32Array.from(sorted, (a) => a[0]), [
            sorted.length,
          ]),
          [LAYER_IO.counts]: new ort.Tensor(
            "int32",
            Int32Array.from(c.hosted, (e) => c.assign.filter((a) => a[1] === e).length),
            [c.hosted.length],
          ),
          [LAYER_IO.weight]: new ort.Tensor("float32", Float32Array.from(sorted, (a) => a[2]), [
            sorted.length,
            1,
          ]),
        });
        // Oracle: float64 expert by expert.
        const routed = new Float64Array(c.rows * D);
        for (const [row, expert, weight] of c.assign) {
          const y = geluExpertOutput(
            layer.experts[expert]!,
            rows.subarray(row * D, (row + 1) * D),
            D,
            F,
          );
          for (let i = 0; i < D; i++) routed[row * D + i]! += weight * y[i]!;
        }
        const hidden = new Float64Array(c.entry * D);
        for (let r = 0; r < c.entry; r++) {
          const shared = geluExpertOutput(
            layer.shared[0]!,
            rows.subarray(r * D, (r + 1) * D),
            D,
            F,
          );
          for (let i = 0; i < D; i++) {
            hidden[r * D + i] = residual[r * D + i]! + routed[r * D + i]! + shared[i]!;
          }
        }
        assert.deepEqual(out[LAYER_IO.routed]!.dims, [c.rows, D]);
        assert.deepEqual(out[LAYER_IO.hidden]!.dims, [c.entry, D]);
        assert.deepEqual(out[LAYER_IO.logits]!.dims, [c.entry, E]);
        assertClose(out[LAYER_IO.routed]!.data as Float32Array, routed, 1e-5);
        assertClose(out[LAYER_IO.hidden]!.data as Float32Array, hidden, 1e-5);
        const logits = new Float64Array(c.entry * E);
        for (let r = 0; r < c.entry; r++) {
          logits.set(
            geluGateLogits(model.layers[1]!.gate, hidden.subarray(r * D, (r + 1) * D), D),
            r * E,
          );
        }
        assertClose(out[LAYER_IO.logits]!.data as Float32Array, logits, 1e-5);
        await s.release();
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("composeLayerGraph() refuses parts that break the x → y contract or predate opset 13", async () => {
  const { dir, read } = await geluLayer();
  try {
    const expert = await read("layer0/expert0.onnx");
    const { onnx } = pkg;
    const renamed = onnx.ModelProto.decode(expert);
    renamed.graph!.input![0]!.name = "input";
    assert.throws(
      () =>
        composeLayerGraph({
          dModel: D,
          experts: [{ id: 3, bytes: onnx.ModelProto.encode(renamed).finish() }],
          shared: [],
        }),
      /expert 3 must have exactly one input "x", has \[input\]/,
    );
    const old = onnx.ModelProto.decode(expert);
    old.opsetImport = [{ domain: "", version: 11 }];
    assert.throws(
      () =>
        composeLayerGraph({
          dModel: D,
          experts: [{ id: 0, bytes: onnx.ModelProto.encode(old).finish() }],
          shared: [],
        }),
      /opset 11; layer composition needs >= 13/,
    );
    assert.throws(
      () =>
        composeLayerGraph({
          dModel: D,
          experts: [{ id: 0, bytes: new Uint8Array([1, 2, 3]) }],
          shared: [],
        }),
      /Cannot read expert 0/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function assertClose(got: Float32Array, expected: Float64Array, tolerance: number): void {
  assert.equal(got.length, expected.length);
  for (let i = 0; i < got.length; i++) {
    assert.ok(
      Math.abs(got[i]! - expected[i]!) <= tolerance,
      `index ${i}: ${got[i]} vs ${expected[i]}`,
    );
  }
}
