/**
 * @module Reads float32 and float16 initializers (weights) out of ONNX files, and turns them
 * into the gate and expert weights of `weights.ts` (the part's kind follows from which
 * initializers it has: `w1` → MLP, `w_gate` → SwiGLU; `norm.*` → RMSNorm prelude).
 *
 * Accepts both storage forms ONNX exporters use: `raw_data` (little-endian bytes, what
 * PyTorch and our generator write) and the repeated `float_data` field. Float16 values
 * are widened to float32 exactly, as the graph's `Cast` does.
 */
import pkg from "onnx-proto";
import {
  checkExpertWeights,
  checkGateWeights,
  EXPERT_INITIALIZERS,
  type ExpertWeights,
  GATE_INITIALIZERS,
  type GateWeights,
  type NormWeights,
  PRELUDE_INITIALIZERS,
  SWIGLU_INITIALIZERS,
} from "./weights.ts";

const { onnx } = pkg;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const FLOAT16 = onnx.TensorProto.DataType.FLOAT16;

/** One float initializer: its shape and row-major values (float16 widened). */
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
    const type = initializer.dataType;
    if (type !== FLOAT && type !== FLOAT16) {
      throw new TypeError(
        `Cannot read initializer "${name}": data type ${type} is not float32 (1) or float16 (10)`,
      );
    }
    const dims = (initializer.dims ?? []).map(int64ToNumber);
    const count = dims.reduce((a, b) => a * b, 1);
    const raw = initializer.rawData && initializer.rawData.length > 0
      ? initializer.rawData
      : undefined;
    const data = type === FLOAT16
      ? float16FromStorage(raw, initializer.int32Data ?? [])
      : raw
      ? float32FromLittleEndian(raw)
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

/** Gate weights out of a gate file's initializers (`gate.weight`, optional `gate.bias`). */
export function gateWeightsFrom(initializers: Map<string, OnnxTensor>): GateWeights {
  const weight = requireTensor(initializers, GATE_INITIALIZERS.weight, 2);
  const bias = initializers.has(GATE_INITIALIZERS.bias)
    ? requireTensor(initializers, GATE_INITIALIZERS.bias, 1).data
    : undefined;
  const gate: GateWeights = {
    dModel: weight.dims[0]!,
    experts: weight.dims[1]!,
    weight: weight.data,
    ...(bias !== undefined ? { bias } : {}),
    ...normFrom(initializers),
  };
  checkGateWeights(gate);
  return gate;
}

/** Expert weights out of an expert file's initializers (MLP `w1`… or SwiGLU `w_gate`…). */
export function expertWeightsFrom(initializers: Map<string, OnnxTensor>): ExpertWeights {
  const outputGate = initializers.has(PRELUDE_INITIALIZERS.outputGate)
    ? { outputGate: requireTensor(initializers, PRELUDE_INITIALIZERS.outputGate, 2).data }
    : {};
  const common = { ...normFrom(initializers), ...outputGate };
  let expert: ExpertWeights;
  if (initializers.has(SWIGLU_INITIALIZERS.wGate)) {
    const wGate = requireTensor(initializers, SWIGLU_INITIALIZERS.wGate, 2);
    expert = {
      kind: "swiglu",
      dModel: wGate.dims[0]!,
      dFf: wGate.dims[1]!,
      wGate: wGate.data,
      wUp: requireTensor(initializers, SWIGLU_INITIALIZERS.wUp, 2).data,
      wDown: requireTensor(initializers, SWIGLU_INITIALIZERS.wDown, 2).data,
      ...common,
    };
  } else {
    const w1 = requireTensor(initializers, EXPERT_INITIALIZERS.w1, 2);
    expert = {
      kind: "mlp",
      dModel: w1.dims[0]!,
      dFf: w1.dims[1]!,
      w1: w1.data,
      b1: requireTensor(initializers, EXPERT_INITIALIZERS.b1, 1).data,
      w2: requireTensor(initializers, EXPERT_INITIALIZERS.w2, 2).data,
      b2: requireTensor(initializers, EXPERT_INITIALIZERS.b2, 1).data,
      ...common,
    };
  }
  checkExpertWeights(expert);
  return expert;
}

/** `{ norm }` when the file has the RMSNorm prelude's initializers, else `{}`. */
function normFrom(initializers: Map<string, OnnxTensor>): { norm?: NormWeights } {
  if (!initializers.has(PRELUDE_INITIALIZERS.normWeight)) return {};
  return {
    norm: {
      weight: requireTensor(initializers, PRELUDE_INITIALIZERS.normWeight, 1).data,
      epsilon: requireTensor(initializers, PRELUDE_INITIALIZERS.normEpsilon, 0).data[0]!,
    },
  };
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

/** Float16 values from `raw_data` or from `int32_data` (one value per element, low 16 bits). */
function float16FromStorage(raw: Uint8Array | undefined, int32Data: number[]): Float32Array {
  if (raw === undefined) {
    return Float32Array.from(new Float16Array(Uint16Array.from(int32Data).buffer));
  }
  if (raw.length % 2 !== 0) {
    throw new RangeError(
      `Cannot decode float16 raw_data: ${raw.length} bytes is not a multiple of 2`,
    );
  }
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  return Float32Array.from({ length: raw.length / 2 }, (_, i) => view.getFloat16(i * 2, true));
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
