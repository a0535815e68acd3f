/**
 * @module Builds the ONNX files of a model (opset 17, IR version 8) from weight arrays.
 *
 * Every graph maps input `x` `[n, d_model]` (dynamic `n`) to output `y`; weights are
 * initializers stored as little-endian float32 `raw_data`.
 * - Gate: `y = MatMul(x, gate.weight) + gate.bias` → `[n, experts]`.
 * - Expert: `y = MatMul(act(MatMul(x, w1) + b1), w2) + b2` → `[n, d_model]`, with
 *   `silu(z) = z · Sigmoid(z)` or `Relu`.
 */
import pkg from "onnx-proto";
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../shared/model_manifest.ts";
import {
  type Activation,
  checkExpertWeights,
  checkGateWeights,
  EXPERT_INITIALIZERS,
  type ExpertWeights,
  GATE_INITIALIZERS,
  type GateWeights,
} from "./weights.ts";

const { onnx } = pkg;

/** ONNX opset version of the generated graphs. */
export const ONNX_OPSET = 17;
/** ONNX IR version of the generated files. */
export const ONNX_IR_VERSION = 8;

const ROWS_DIM = "n";
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** ONNX bytes of a gate graph `x [n, d_model] → y [n, experts]`. */
export function buildGateModel(gate: GateWeights): Uint8Array {
  checkGateWeights(gate);
  const { weight, bias } = GATE_INITIALIZERS;
  return encodeModel("gate", {
    inputWidth: gate.dModel,
    outputWidth: gate.experts,
    initializers: [
      tensor(weight, [gate.dModel, gate.experts], gate.weight),
      tensor(bias, [gate.experts], gate.bias),
    ],
    nodes: [
      node("MatMul", [ONNX_INPUT_NAME, weight], ["gate.matmul"]),
      node("Add", ["gate.matmul", bias], [ONNX_OUTPUT_NAME]),
    ],
  });
}

/** ONNX bytes of an expert MLP graph `x [n, d_model] → y [n, d_model]`. */
export function buildExpertModel(expert: ExpertWeights, activation: Activation): Uint8Array {
  checkExpertWeights(expert);
  const { w1, b1, w2, b2 } = EXPERT_INITIALIZERS;
  const activationNodes = activation === "silu"
    ? [
      node("Sigmoid", ["hidden"], ["gate_sigmoid"]),
      node("Mul", ["hidden", "gate_sigmoid"], ["act"]),
    ]
    : [node("Relu", ["hidden"], ["act"])];
  return encodeModel("expert", {
    inputWidth: expert.dModel,
    outputWidth: expert.dModel,
    initializers: [
      tensor(w1, [expert.dModel, expert.dFf], expert.w1),
      tensor(b1, [expert.dFf], expert.b1),
      tensor(w2, [expert.dFf, expert.dModel], expert.w2),
      tensor(b2, [expert.dModel], expert.b2),
    ],
    nodes: [
      node("MatMul", [ONNX_INPUT_NAME, w1], ["hidden_matmul"]),
      node("Add", ["hidden_matmul", b1], ["hidden"]),
      ...activationNodes,
      node("MatMul", ["act", w2], ["out_matmul"]),
      node("Add", ["out_matmul", b2], [ONNX_OUTPUT_NAME]),
    ],
  });
}

interface GraphParts {
  inputWidth: number;
  outputWidth: number;
  initializers: pkg.onnx.ITensorProto[];
  nodes: pkg.onnx.INodeProto[];
}

function encodeModel(name: string, parts: GraphParts): Uint8Array {
  const model = onnx.ModelProto.create({
    irVersion: ONNX_IR_VERSION,
    producerName: "switchyard",
    producerVersion: "1",
    opsetImport: [{ domain: "", version: ONNX_OPSET }],
    graph: {
      name,
      node: parts.nodes,
      initializer: parts.initializers,
      input: [rowsTensorInfo(ONNX_INPUT_NAME, parts.inputWidth)],
      output: [rowsTensorInfo(ONNX_OUTPUT_NAME, parts.outputWidth)],
    },
  });
  return onnx.ModelProto.encode(model).finish();
}

function node(opType: string, input: string[], output: string[]): pkg.onnx.INodeProto {
  return { opType, input, output, name: `${opType.toLowerCase()}_${output[0]}` };
}

function rowsTensorInfo(name: string, width: number): pkg.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: FLOAT,
        shape: { dim: [{ dimParam: ROWS_DIM }, { dimValue: width }] },
      },
    },
  };
}

function tensor(name: string, dims: number[], data: Float32Array): pkg.onnx.ITensorProto {
  return { name, dims, dataType: FLOAT, rawData: float32LittleEndianBytes(data) };
}

/** Little-endian bytes of float32 values (a plain copy on little-endian hosts). */
function float32LittleEndianBytes(data: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(data.slice().buffer);
  const bytes = new Uint8Array(data.length * 4);
  const view = new DataView(bytes.buffer);
  data.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return bytes;
}
