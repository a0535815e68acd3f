/**
 * @module Decoding and validating OIP v2 inference requests (JSON and binary
 * extension) into a token matrix, and encoding them for clients.
 *
 * Two levels, one code path: {@linkcode checkInferRequest} validates what routing needs
 * (header JSON, tensor names, shapes, datatypes, byte counts, limits) without touching
 * tensor values, so the router's hop costs no per-element work; {@linkcode decodeInferRequest}
 * (backends) runs the same checks and then decodes and checks the values (NaN/Inf, JSON
 * data counts). Every rejection is a 400 naming the field, from whichever side finds it.
 */
import { ApiError } from "./errors.ts";
import {
  firstNonFinite,
  joinBinaryBody,
  readFloat32,
  splitBinaryBody,
  tensorBytes,
} from "./binary_tensor.ts";
import { fastInferRequest } from "./infer_request_fast.ts";
import { type InferRequest, InferRequestSchema, INPUT_TENSOR, OUTPUT_TENSORS } from "./oip.ts";
import { jsonDepthExceeded, jsonTooDeepMessage, MAX_JSON_DEPTH } from "./json_depth.ts";
import { flattenFp32, TensorValueError } from "./tensor_values.ts";

/** What a decoder needs to know about the model. */
export interface ModelInputShape {
  name: string;
  dModel: number;
}

/** An output the client asked for; `binary` selects the binary extension. */
export interface RequestedOutput {
  name: string;
  binary: boolean;
}

/** A request whose structure is valid; its tensor values are not decoded yet. */
export interface CheckedInferRequest {
  id: string | undefined;
  requestType: string | undefined;
  rows: number;
  outputs: RequestedOutput[];
  /** The input's values: `binary` bytes (length already checked) or JSON `data` as sent. */
  input: { kind: "binary"; bytes: Uint8Array } | { kind: "json"; data: unknown[] };
}

/** A validated inference request. */
export interface DecodedInferRequest {
  id: string | undefined;
  requestType: string | undefined;
  /** Row-major `[rows, dModel]` FP32 hidden states. */
  tokens: Float32Array;
  rows: number;
  outputs: RequestedOutput[];
}

/** Options of {@linkcode checkInferRequest} and {@linkcode decodeInferRequest}. */
export interface DecodeInferRequestOptions {
  model: ModelInputShape;
  /** Value of `Inference-Header-Content-Length`, or null for a plain JSON body. */
  headerLength: number | null;
  /** Most rows one request may carry. */
  maxTokens: number;
  /** Value of the `x-request-type` header, used when `parameters.request_type` is absent. */
  requestTypeHeader?: string | null;
}

const REQUEST_TYPE = /^[A-Za-z0-9_.-]{1,64}$/;

function bad(message: string): ApiError {
  return new ApiError("bad_request", `Cannot run inference: ${message}`);
}

function parseHeader(body: Uint8Array, headerLength: number | null) {
  let json: string;
  let payload: Uint8Array = new Uint8Array(0);
  try {
    ({ json, payload } = splitBinaryBody(body, headerLength ?? body.byteLength));
  } catch (error) {
    throw bad((error as Error).message);
  }
  // Depth first, on the bytes: nothing below recurses on what the sender nested.
  const header = body.subarray(0, headerLength ?? body.byteLength);
  const tooDeep = jsonDepthExceeded(header, MAX_JSON_DEPTH);
  if (tooDeep >= 0) throw bad(jsonTooDeepMessage(MAX_JSON_DEPTH, tooDeep));
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw bad(`body is not valid JSON (${(error as Error).message})`);
  }
  // The plainly valid header skips the schema machinery; anything else gets its message.
  const fast = fastInferRequest(raw);
  if (fast !== undefined) return { request: fast, payload };
  const parsed = InferRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
      .join("").replace(/^\./, "");
    throw bad(`${path || "body"}: ${issue.message}`);
  }
  return { request: parsed.data, payload };
}

function flatten(data: unknown[], field: string, expected: number): Float32Array {
  try {
    return flattenFp32(data, field, expected);
  } catch (error) {
    if (error instanceof TensorValueError) throw bad(error.message);
    throw error;
  }
}

function requestType(request: InferRequest, header: string | null | undefined): string | undefined {
  const value = request.parameters?.["request_type"] ?? header ?? undefined;
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !REQUEST_TYPE.test(value)) {
    throw bad(
      `parameters.request_type must match ${REQUEST_TYPE.source}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function requestedOutputs(request: InferRequest): RequestedOutput[] {
  const binaryDefault = request.parameters?.["binary_data_output"] === true;
  const outputs = request.outputs ?? [{ name: OUTPUT_TENSORS[0] }];
  const seen = new Set<string>();
  return outputs.map((output, i) => {
    if (!(OUTPUT_TENSORS as readonly string[]).includes(output.name)) {
      throw bad(
        `outputs[${i}].name must be one of ${OUTPUT_TENSORS.join(", ")}, got "${output.name}"`,
      );
    }
    if (seen.has(output.name)) throw bad(`outputs[${i}].name "${output.name}" is requested twice`);
    seen.add(output.name);
    const binary = output.parameters?.["binary_data"];
    return { name: output.name, binary: typeof binary === "boolean" ? binary : binaryDefault };
  });
}

/**
 * Validates everything but the tensor values: header JSON, names, shape, datatype,
 * limits, outputs, request type, and for binary input the byte counts. Costs no work
 * per element (the router's hop); throws {@linkcode ApiError} (400) naming the field.
 */
export function checkInferRequest(
  body: Uint8Array,
  options: DecodeInferRequestOptions,
): CheckedInferRequest {
  const { model, maxTokens } = options;
  const { request, payload } = parseHeader(body, options.headerLength);
  if (request.inputs.length !== 1) {
    throw bad(
      `inputs must hold exactly 1 tensor named "${INPUT_TENSOR}", got ${request.inputs.length}`,
    );
  }
  const input = request.inputs[0]!;
  if (input.name !== INPUT_TENSOR) {
    throw bad(`inputs[0].name must be "${INPUT_TENSOR}", got "${input.name}"`);
  }
  if (input.datatype !== "FP32") {
    throw bad(`inputs[0].datatype must be "FP32", got "${input.datatype}"`);
  }
  const [rows, cols] = input.shape;
  if (input.shape.length !== 2 || rows === undefined || cols !== model.dModel) {
    throw bad(`inputs[0].shape must be [tokens, ${model.dModel}], got [${input.shape.join(", ")}]`);
  }
  if (rows === 0) throw bad("inputs[0].shape[0] (tokens) must be at least 1, got 0");
  if (rows > maxTokens) {
    throw bad(`inputs[0].shape[0] (tokens) must be at most ${maxTokens}, got ${rows}`);
  }
  const expected = rows * cols;
  const binarySize = input.parameters?.["binary_data_size"];
  let values: CheckedInferRequest["input"];
  if (binarySize !== undefined) {
    if (options.headerLength === null) {
      throw bad(
        "inputs[0].parameters.binary_data_size needs the Inference-Header-Content-Length header",
      );
    }
    if (binarySize !== expected * 4) {
      throw bad(
        `inputs[0].parameters.binary_data_size must be ${
          expected * 4
        } (${rows}×${cols} FP32), got ${JSON.stringify(binarySize)}`,
      );
    }
    if (payload.byteLength !== expected * 4) {
      throw bad(
        `binary payload has ${payload.byteLength} bytes, inputs[0].parameters.binary_data_size says ${
          expected * 4
        }`,
      );
    }
    values = { kind: "binary", bytes: payload };
  } else {
    if (payload.byteLength > 0) {
      throw bad(
        `binary payload of ${payload.byteLength} bytes follows the header but no input declares binary_data_size`,
      );
    }
    if (input.data === undefined) {
      throw bad("inputs[0].data is missing (or set parameters.binary_data_size)");
    }
    values = { kind: "json", data: input.data };
  }
  return {
    id: request.id,
    requestType: requestType(request, options.requestTypeHeader),
    rows,
    outputs: requestedOutputs(request),
    input: values,
  };
}

/**
 * Decodes and validates a request body (backends): {@linkcode checkInferRequest}, then
 * the values — binary bytes as one typed view (one copy when unaligned) and one tight
 * finite check, JSON data counted and checked value by value. Throws 400 naming the field.
 */
export function decodeInferRequest(
  body: Uint8Array,
  options: DecodeInferRequestOptions,
): DecodedInferRequest {
  const checked = checkInferRequest(body, options);
  const expected = checked.rows * options.model.dModel;
  let tokens: Float32Array;
  if (checked.input.kind === "binary") {
    tokens = readFloat32(checked.input.bytes);
    const at = firstNonFinite(tokens);
    if (at >= 0) throw bad(`inputs[0] binary data[${at}] must be finite, got ${tokens[at]}`);
  } else {
    tokens = flatten(checked.input.data, "inputs[0].data", expected);
  }
  return {
    id: checked.id,
    requestType: checked.requestType,
    tokens,
    rows: checked.rows,
    outputs: checked.outputs,
  };
}

/** Options of {@linkcode encodeInferRequest}. */
export interface EncodeInferRequestOptions {
  id?: string;
  requestType?: string;
  /** Send the input as binary tensor data. */
  binaryInput?: boolean;
  /** Outputs to request; default `output` only. */
  outputs?: string[];
  /**
   * Ask for binary outputs; default: the same as `binaryInput`. Switchyard's own
   * clients (traffic, benchmarks, tests' binary paths) get binary answers without
   * asking twice: a JSON output costs the server many times a binary one (docs/results/hop.md).
   */
  binaryOutputs?: boolean;
}

/** Encodes an inference request for a client; `headerLength` is null for plain JSON. */
export function encodeInferRequest(
  tokens: Float32Array,
  dModel: number,
  options: EncodeInferRequestOptions = {},
): { body: Uint8Array<ArrayBuffer>; headerLength: number | null } {
  const rows = tokens.length / dModel;
  const parameters: Record<string, unknown> = {};
  if (options.requestType !== undefined) parameters["request_type"] = options.requestType;
  const header: InferRequest = {
    ...(options.id !== undefined ? { id: options.id } : {}),
    parameters,
    inputs: [{
      name: INPUT_TENSOR,
      shape: [rows, dModel],
      datatype: "FP32",
      ...(options.binaryInput
        ? { parameters: { binary_data_size: tokens.byteLength } }
        : { data: Array.from(tokens) }),
    }],
    outputs: (options.outputs ?? [OUTPUT_TENSORS[0]]).map((name) => ({
      name,
      parameters: { binary_data: options.binaryOutputs ?? options.binaryInput === true },
    })),
  };
  if (!options.binaryInput) {
    return { body: new TextEncoder().encode(JSON.stringify(header)), headerLength: null };
  }
  return joinBinaryBody(header, [tensorBytes(tokens)]);
}
