/** @module Tests of ONNX graph building and weight reading against ONNX Runtime. */
import assert from "node:assert/strict";
import pkg from "onnx-proto";
import { buildExpertModel, buildGateModel } from "./onnx_graphs.ts";
import { expertWeightsFrom, gateWeightsFrom, readOnnxInitializers } from "./onnx_weights.ts";
import { createGaussian, createRandom, gaussianArray } from "./prng.ts";
import { expertOutput, gateLogits } from "./reference_math.ts";
import { maxAbsDiff, runOnnx } from "./test_helpers.ts";
import type { ExpertWeights, GateWeights } from "./weights.ts";
import { ACTIVATIONS } from "../../shared/model_manifest.ts";

const { onnx } = pkg;
const gaussian = createGaussian(createRandom(5));

function randomGate(dModel: number, experts: number): GateWeights {
  return {
    dModel,
    experts,
    weight: gaussianArray(gaussian, dModel * experts, 0.3),
    bias: gaussianArray(gaussian, experts, 0.1),
  };
}

function randomExpert(dModel: number, dFf: number): ExpertWeights {
  return {
    kind: "mlp",
    dModel,
    dFf,
    w1: gaussianArray(gaussian, dModel * dFf, 1 / Math.sqrt(dModel)),
    b1: gaussianArray(gaussian, dFf, 0.1),
    w2: gaussianArray(gaussian, dFf * dModel, 1 / Math.sqrt(dFf)),
    b2: gaussianArray(gaussian, dModel, 0.1),
  };
}

Deno.test("buildGateModel() runs in ONNX Runtime like the reference for 1 and 5 rows", async () => {
  const gate = randomGate(16, 8);
  const bytes = buildGateModel(gate);
  for (const rows of [1, 5]) {
    const x = gaussianArray(gaussian, rows * 16);
    const y = await runOnnx(bytes, x, rows);
    assert.equal(y.length, rows * 8);
    const error = maxAbsDiff(y, gateLogits(gate, x, rows));
    assert(error <= 1e-5, `max abs error ${error}`);
  }
});

function randomSwiglu(dModel: number, dFf: number): ExpertWeights {
  return {
    kind: "swiglu",
    dModel,
    dFf,
    wGate: gaussianArray(gaussian, dModel * dFf, 1 / Math.sqrt(dModel)),
    wUp: gaussianArray(gaussian, dModel * dFf, 1 / Math.sqrt(dModel)),
    wDown: gaussianArray(gaussian, dFf * dModel, 1 / Math.sqrt(dFf)),
  };
}

function randomNorm(dModel: number) {
  return { weight: gaussianArray(gaussian, dModel, 0.3).map((w) => 1 + w), epsilon: 1e-5 };
}

Deno.test("buildExpertModel() runs MLP experts with every activation like the reference", async () => {
  const expert = randomExpert(16, 32);
  for (const activation of ACTIVATIONS) {
    const bytes = buildExpertModel(expert, activation);
    for (const rows of [1, 5]) {
      const x = gaussianArray(gaussian, rows * 16);
      const y = await runOnnx(bytes, x, rows);
      const error = maxAbsDiff(y, expertOutput(expert, x, rows, activation));
      assert(error <= 1e-5, `${activation}, ${rows} rows: max abs error ${error}`);
    }
  }
});

Deno.test("readOnnxInitializers() returns exactly the weights that were written", () => {
  const gate = randomGate(4, 6);
  assert.deepEqual(gateWeightsFrom(readOnnxInitializers(buildGateModel(gate))), gate);
  const expert = randomExpert(4, 3);
  const tensors = readOnnxInitializers(buildExpertModel(expert, "silu"));
  assert.deepEqual(tensors.get("w1")?.dims, [4, 3]);
  assert.deepEqual(tensors.get("w2")?.dims, [3, 4]);
  assert.deepEqual(expertWeightsFrom(tensors), expert);
});

Deno.test("buildExpertModel() runs SwiGLU experts with every activation like the reference", async () => {
  const expert = randomSwiglu(16, 24);
  for (const activation of ACTIVATIONS) {
    const bytes = buildExpertModel(expert, activation);
    for (const rows of [1, 6]) {
      const x = gaussianArray(gaussian, rows * 16, 2);
      const y = await runOnnx(bytes, x, rows);
      const error = maxAbsDiff(y, expertOutput(expert, x, rows, activation));
      assert(error <= 1e-5, `${activation}, ${rows} rows: max abs error ${error}`);
    }
  }
});

Deno.test("an RMSNorm prelude and a sigmoid output gate run like the reference", async () => {
  const { bias: _unused, ...unbiased } = randomGate(16, 8);
  const gate = { ...unbiased, norm: randomNorm(16) };
  const shared = {
    ...randomSwiglu(16, 24),
    norm: randomNorm(16),
    outputGate: gaussianArray(gaussian, 16, 0.5),
  };
  const x = gaussianArray(gaussian, 3 * 16, 3);
  const logits = await runOnnx(buildGateModel(gate), x, 3);
  assert(maxAbsDiff(logits, gateLogits(gate, x, 3)) <= 1e-5);
  const y = await runOnnx(buildExpertModel(shared, "silu"), x, 3);
  assert(maxAbsDiff(y, expertOutput(shared, x, 3, "silu")) <= 1e-5);
  // The weights read back from the files are the ones written.
  assert.deepEqual(gateWeightsFrom(readOnnxInitializers(buildGateModel(gate))), {
    ...gate,
    norm: { weight: gate.norm.weight, epsilon: Math.fround(1e-5) },
  });
  const back = expertWeightsFrom(readOnnxInitializers(buildExpertModel(shared, "silu")));
  assert.equal(back.kind, "swiglu");
  assert.deepEqual(back.outputGate, shared.outputGate);
});

Deno.test("float16 weight storage halves the file and reads back as the rounded weights", async () => {
  const expert = randomSwiglu(32, 64);
  const full = buildExpertModel(expert, "gelu");
  const half = buildExpertModel(expert, "gelu", { weightDtype: "float16" });
  assert(half.length < full.length * 0.6, `${half.length} vs ${full.length} bytes`);
  const rounded = expertWeightsFrom(readOnnxInitializers(half));
  assert(rounded.kind === "swiglu");
  assert.deepEqual(
    rounded.wUp,
    Float32Array.from(Float16Array.from(expert.kind === "swiglu" ? expert.wUp : [])),
  );
  const x = gaussianArray(gaussian, 4 * 32);
  const y = await runOnnx(half, x, 4);
  assert(maxAbsDiff(y, expertOutput(rounded, x, 4, "gelu")) <= 1e-5);
});

Deno.test("readOnnxInitializers() reads float_data initializers too", () => {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    graph: {
      initializer: [{
        name: "gate.weight",
        dims: [2, 2],
        dataType: onnx.TensorProto.DataType.FLOAT,
        floatData: [1, 2, 3, 4.5],
      }],
    },
  });
  const tensors = readOnnxInitializers(onnx.ModelProto.encode(model).finish());
  assert.deepEqual(tensors.get("gate.weight"), {
    dims: [2, 2],
    data: Float32Array.from([1, 2, 3, 4.5]),
  });
});

Deno.test("readOnnxInitializers() rejects non-float32 and mis-sized initializers", () => {
  const encode = (tensor: pkg.onnx.ITensorProto) =>
    onnx.ModelProto.encode(onnx.ModelProto.create({ graph: { initializer: [tensor] } })).finish();
  assert.throws(
    () => readOnnxInitializers(encode({ name: "w", dims: [1], dataType: 7, int64Data: [1] })),
    /Cannot read initializer "w": data type 7 is not float32/,
  );
  assert.throws(
    () => readOnnxInitializers(encode({ name: "w", dims: [3], dataType: 1, floatData: [1, 2] })),
    /Cannot read initializer "w": 2 values for shape \[3\]/,
  );
});

Deno.test("gateWeightsFrom() names the missing initializer", () => {
  const bytes = buildExpertModel(randomExpert(2, 2), "relu");
  assert.throws(
    () => gateWeightsFrom(readOnnxInitializers(bytes)),
    /Cannot find initializer "gate.weight": the file has "w1", "b1", "w2", "b2"/,
  );
});

Deno.test("buildGateModel() rejects weights that do not match their shape", () => {
  const gate = { ...randomGate(4, 2), bias: new Float32Array(3) };
  assert.throws(() => buildGateModel(gate), /"gate.bias" has 3 values, expected 2/);
});
