/**
 * @module Low-level ONNX protobuf helpers of the graph builders: nodes, float32 and
 * float16 initializers (little-endian `raw_data`), and the model envelope (opset 17, IR 8,
 * input `x [n, width]` → output `y [n, width]`).
 */
import pkg from "onnx-proto";
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../shared/model_manifest.ts";

const { onnx } = pkg;

/** ONNX opset version of the generated graphs. */
export const ONNX_OPSET = 17;
/** ONNX IR version of the generated files. */
export const ONNX_IR_VERSION = 8;

const ROWS_DIM = "n";
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const FLOAT16 = onnx.TensorProto.DataType.FLOAT16;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** A node, named after its first output (unique in our graphs). */
export type OnnxNode = pkg.onnx.INodeProto;
/** An initializer. */
export type OnnxTensor = pkg.onnx.ITensorProto;

/** The nodes and initializers of a graph from `x [n, inputWidth]` to `y [n, outputWidth]`. */
export interface GraphParts {
  inputWidth: number;
  outputWidth: number;
  initializers: OnnxTensor[];
  nodes: OnnxNode[];
}

/** Encodes a complete model. */
export function encodeModel(name: string, parts: GraphParts): Uint8Array {
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

/** A node with optional attributes. */
export function node(
  opType: string,
  input: string[],
  output: string[],
  attribute: pkg.onnx.IAttributeProto[] = [],
): OnnxNode {
  return { opType, input, output, name: `${opType.toLowerCase()}_${output[0]}`, attribute };
}

/** An INTS attribute. */
export function intsAttribute(name: string, ints: number[]): pkg.onnx.IAttributeProto {
  return { name, type: onnx.AttributeProto.AttributeType.INTS, ints };
}

/** An INT attribute. */
export function intAttribute(name: string, i: number): pkg.onnx.IAttributeProto {
  return { name, type: onnx.AttributeProto.AttributeType.INT, i };
}

/** A float32 initializer (`dims` `[]` for a scalar). */
export function tensor(name: string, dims: number[], data: Float32Array): OnnxTensor {
  return { name, dims, dataType: FLOAT, rawData: littleEndianBytes(data) };
}

/** A float16 initializer holding `data` rounded to half precision. */
export function tensorFloat16(name: string, dims: number[], data: Float32Array): OnnxTensor {
  return { name, dims, dataType: FLOAT16, rawData: littleEndianBytes(Float16Array.from(data)) };
}

/** `Cast(from) → to` as float32. */
export function castToFloat(from: string, to: string): OnnxNode {
  return node("Cast", [from], [to], [intAttribute("to", FLOAT)]);
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

/** Little-endian bytes of float values (a plain copy on little-endian hosts). */
function littleEndianBytes(data: Float32Array | Float16Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(data.slice().buffer);
  const size = data.BYTES_PER_ELEMENT;
  const bytes = new Uint8Array(data.length * size);
  const view = new DataView(bytes.buffer);
  data.forEach((value, i) =>
    size === 4 ? view.setFloat32(i * 4, value, true) : view.setFloat16(i * 2, value, true)
  );
  return bytes;
}
