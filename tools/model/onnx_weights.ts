/**
 * @module Reads float32 initializers (weights) out of ONNX files, and turns them into the
 * gate and expert weights of `weights.ts`.
 *
 * Accepts both storage forms ONNX exporters use: `raw_data` (little-endian bytes, what
 * PyTorch and our generator write) and the repeated `float_data` field.
 */
import pkg from "onnx-proto";
import {
  checkExpertWeights,
  checkGateWeights,
  EXPERT_INITIALIZERS,
  type ExpertWeights,
  GATE_INITIALIZERS,
  type GateWeights,
} from "./weights.ts";

const { onnx } = pkg;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** One float32 initializer: its shape and row-major values. */
export interface OnnxTensor {
  dims: number[];
  data: Float32Array;
}

/** Every initializer of an ONNX model, by name. */
export function readOnnxInitializers(bytes: Uint8Array): Map<string, OnnxTensor> {
  const model = onnx.ModelProto.decode(bytes);
  const tensors = new Map<string, OnnxTensor>();
  for (const initializer of model.graph?.initializer ?? []) {
    const name = initializer.name ?? "";
    if (initializer.dataType !== onnx.TensorProto.DataType.FLOAT) {
      throw new TypeError(
        `Cannot read initializer "${name}": data type ${initializer.dataType} is not float32 (1)`,
      );
    }
    const dims = (initializer.dims ?? []).map(int64ToNumber);
    const count = dims.reduce((a, b) => a * b, 1);
    const data = initializer.rawData && initializer.rawData.length > 0
      ? float32FromLittleEndian(initializer.rawData)
      : Float32Array.from(initializer.floatData ?? []);
    if (data.length !== count) {
      throw new RangeError(
        `Cannot read initializer "${name}": ${data.length} values for shape [${dims.join(", ")}]`,
      );
    }
    tensors.set(name, { dims, data });
  }
  return tensors;
}

/** Every initializer of the ONNX file at `path`, by name. */
export async function loadOnnxInitializers(path: string): Promise<Map<string, OnnxTensor>> {
  return readOnnxInitializers(await Deno.readFile(path));
}

/** Gate weights out of a gate file's initializers (`gate.weight`, `gate.bias`). */
export function gateWeightsFrom(initializers: Map<string, OnnxTensor>): GateWeights {
  const weight = requireTensor(initializers, GATE_INITIALIZERS.weight, 2);
  const bias = requireTensor(initializers, GATE_INITIALIZERS.bias, 1);
  const gate = {
    dModel: weight.dims[0]!,
    experts: weight.dims[1]!,
    weight: weight.data,
    bias: bias.data,
  };
  checkGateWeights(gate);
  return gate;
}

/** Expert weights out of an expert file's initializers (`w1`, `b1`, `w2`, `b2`). */
export function expertWeightsFrom(initializers: Map<string, OnnxTensor>): ExpertWeights {
  const w1 = requireTensor(initializers, EXPERT_INITIALIZERS.w1, 2);
  const expert = {
    dModel: w1.dims[0]!,
    dFf: w1.dims[1]!,
    w1: w1.data,
    b1: requireTensor(initializers, EXPERT_INITIALIZERS.b1, 1).data,
    w2: requireTensor(initializers, EXPERT_INITIALIZERS.w2, 2).data,
    b2: requireTensor(initializers, EXPERT_INITIALIZERS.b2, 1).data,
  };
  checkExpertWeights(expert);
  return expert;
}

function requireTensor(
  initializers: Map<string, OnnxTensor>,
  name: string,
  rank: number,
): OnnxTensor {
  const tensor = initializers.get(name);
  if (tensor === undefined) {
    const known = [...initializers.keys()].map((key) => `"${key}"`).join(", ");
    throw new RangeError(`Cannot find initializer "${name}": the file has ${known || "none"}`);
  }
  if (tensor.dims.length !== rank) {
    throw new RangeError(
      `Cannot use initializer "${name}": rank ${tensor.dims.length}, expected ${rank}`,
    );
  }
  return tensor;
}

/** protobufjs decodes int64 as a number or, when `long` is installed, as a Long. */
function int64ToNumber(value: number | { toNumber(): number }): number {
  return typeof value === "number" ? value : value.toNumber();
}

function float32FromLittleEndian(bytes: Uint8Array): Float32Array {
  if (bytes.length % 4 !== 0) {
    throw new RangeError(
      `Cannot decode float32 raw_data: ${bytes.length} bytes is not a multiple of 4`,
    );
  }
  if (LITTLE_ENDIAN) return new Float32Array(new Uint8Array(bytes).buffer); // copy: aligned, owned
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const values = new Float32Array(bytes.length / 4);
  for (let i = 0; i < values.length; i++) values[i] = view.getFloat32(i * 4, true);
  return values;
}
