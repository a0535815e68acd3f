/**
 * @module Feeds ↔ onnxruntime tensors, and running one session: shared by the
 * main-thread runner and the Worker side of the Worker runner.
 */
import ort from "onnxruntime-node";
import type { Feeds } from "./graph_runner.ts";

/** Runs `session` on `feeds` and returns the named float32 outputs as owned arrays. */
export async function runSession(
  session: ort.InferenceSession,
  feeds: Feeds,
  outputs: readonly string[],
): Promise<Record<string, Float32Array>> {
  const tensors: Record<string, ort.Tensor> = {};
  for (const [name, feed] of Object.entries(feeds)) {
    tensors[name] = new ort.Tensor(feed.type, feed.data, feed.dims as number[]);
  }
  const result = await session.run(tensors, outputs as string[]);
  const out: Record<string, Float32Array> = {};
  for (const name of outputs) {
    const data = result[name]?.data;
    if (!(data instanceof Float32Array)) {
      throw new TypeError(`Cannot run session: output "${name}" is missing or not float32`);
    }
    out[name] = ownedArray(data);
  }
  return out;
}

/** `data` itself when it spans its whole buffer (transferable as is), else a copy. */
export function ownedArray(data: Float32Array): Float32Array {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
}
