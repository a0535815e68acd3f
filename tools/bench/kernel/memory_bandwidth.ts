/**
 * @module Memory bandwidth as onnxruntime sees it, measured in the same run as the
 * kernels it bounds: single-thread `ReduceSum` over a float32 tensor several times the
 * size of the last-level cache, bytes per CPU-second. A wave that reads every hosted
 * expert's weights once cannot run faster than those bytes ÷ this bandwidth, however
 * few rows it holds.
 */
import ort from "onnxruntime-node";
import pkg from "onnx-proto";
import { processCpuMs } from "../cpu_time.ts";

const { onnx } = pkg;
const FLOAT = onnx.TensorProto.DataType.FLOAT;

/** Bytes per CPU-second of a streaming read of `megabytes` MB, over about `seconds`. */
export async function streamGBps(megabytes = 128, seconds = 1): Promise<number> {
  const length = (megabytes * 1024 * 1024) / 4;
  const model = onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8,
    opsetImport: [{ domain: "", version: 17 }],
    graph: {
      name: "stream",
      node: [{
        opType: "ReduceSum",
        input: ["x"],
        output: ["y"],
        name: "sum",
        attribute: [{ name: "keepdims", type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
      }],
      input: [{
        name: "x",
        type: { tensorType: { elemType: FLOAT, shape: { dim: [{ dimValue: length }] } } },
      }],
      output: [{ name: "y", type: { tensorType: { elemType: FLOAT, shape: { dim: [] } } } }],
    },
  })).finish();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ["cpu"],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const x = new ort.Tensor("float32", new Float32Array(length).fill(0.5), [length]);
  for (let i = 0; i < 2; i++) await session.run({ x });
  let runs = 0;
  const cpu0 = processCpuMs("self");
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    await session.run({ x });
    runs++;
  }
  const cpuS = Math.max(processCpuMs("self") - cpu0, 1) / 1000;
  await session.release();
  return (runs * length * 4) / cpuS / 1e9;
}
