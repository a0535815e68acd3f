/**
 * @module Encoding OIP v2 inference responses (JSON tensors or the binary tensor
 * extension, per output) and decoding them for clients.
 */
import {
  joinBinaryBody,
  readFloat32,
  readInt32,
  splitBinaryBody,
  tensorBytes,
} from "./binary_tensor.ts";
import { HEADER_LENGTH_HEADER, type InferResponse, InferResponseSchema } from "./oip.ts";

/** An output tensor before encoding. */
export interface OutputTensor {
  name: string;
  shape: number[];
  data: Float32Array | Int32Array;
}

/** Fields of the response besides its outputs. */
export interface ResponseHead {
  model_name: string;
  model_version?: string;
  id?: string;
  parameters?: Record<string, unknown>;
}

/** Encodes a response; outputs whose name is in `binary` go as binary tensor data. */
export function encodeInferResponse(
  head: ResponseHead,
  outputs: OutputTensor[],
  binary: ReadonlySet<string>,
): { body: Uint8Array<ArrayBuffer>; headers: Record<string, string> } {
  const chunks: Uint8Array[] = [];
  const header: InferResponse = {
    ...head,
    outputs: outputs.map((output) => {
      const datatype = output.data instanceof Float32Array ? "FP32" : "INT32";
      if (!binary.has(output.name)) {
        return { name: output.name, shape: output.shape, datatype, data: Array.from(output.data) };
      }
      const bytes = tensorBytes(output.data);
      chunks.push(bytes);
      return {
        name: output.name,
        shape: output.shape,
        datatype,
        parameters: { binary_data_size: bytes.byteLength },
      };
    }),
  };
  if (chunks.length === 0) {
    return {
      body: new TextEncoder().encode(JSON.stringify(header)),
      headers: { "content-type": "application/json" },
    };
  }
  const { body, headerLength } = joinBinaryBody(header, chunks);
  return {
    body,
    headers: {
      "content-type": "application/octet-stream",
      [HEADER_LENGTH_HEADER]: String(headerLength),
    },
  };
}

/** A decoded response: its JSON head and each output as a typed array. */
export interface DecodedInferResponse {
  head: InferResponse;
  tensors: Map<string, { shape: number[]; data: Float32Array | Int32Array }>;
}

/** Decodes a response body (JSON or binary extension) for a client. */
export function decodeInferResponse(
  body: Uint8Array,
  headerLength: number | null,
): DecodedInferResponse {
  const { json, payload } = splitBinaryBody(body, headerLength ?? body.byteLength);
  const head = InferResponseSchema.parse(JSON.parse(json));
  const tensors: DecodedInferResponse["tensors"] = new Map();
  let offset = 0;
  for (const output of head.outputs) {
    const size = output.parameters?.["binary_data_size"];
    let data: Float32Array | Int32Array;
    if (typeof size === "number") {
      const bytes = payload.subarray(offset, offset + size);
      offset += size;
      data = output.datatype === "INT32" ? readInt32(bytes) : readFloat32(bytes);
    } else {
      const values = output.data ?? [];
      data = output.datatype === "INT32" ? Int32Array.from(values) : Float32Array.from(values);
    }
    tensors.set(output.name, { shape: output.shape, data });
  }
  return { head, tensors };
}
