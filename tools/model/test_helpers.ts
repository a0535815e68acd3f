/** @module Test helpers for model tooling: run an ONNX file with ONNX Runtime, compare arrays. */
import assert from "node:assert/strict";
import ort from "onnxruntime-node";
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../shared/model_manifest.ts";
import type { GenerateModelOptions } from "./generate.ts";

/** The tiny model the tests generate: fast, yet with groups, top-k and a shared expert. */
export const TINY_MODEL: GenerateModelOptions = {
  dModel: 16,
  dFf: 32,
  layers: 2,
  experts: 8,
  topK: 2,
  groups: 2,
  topkGroup: 1,
  sharedExperts: 1,
};

/** Runs ONNX bytes on CPU with input `x` `[rows, width]` and returns output `y`. */
export async function runOnnx(
  bytes: Uint8Array,
  x: Float32Array,
  rows: number,
): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ["cpu"] });
  try {
    const input = new ort.Tensor("float32", x, [rows, x.length / rows]);
    const result = await session.run({ [ONNX_INPUT_NAME]: input });
    const output = result[ONNX_OUTPUT_NAME];
    assert(output !== undefined, "model has no output y");
    assert.equal(output.dims[0], rows);
    return output.data as Float32Array;
  } finally {
    await session.release();
  }
}

/** Largest absolute difference of two equally long arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length, "lengths differ");
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

/** A fresh temporary directory, removed after `body` runs. */
export async function withTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-model-" });
  try {
    await body(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
