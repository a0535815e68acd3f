/**
 * @module In-process costs of the codec steps on the inference path, per request of a
 * workload, each against the alternative it replaced or competes with:
 *   - binary input decode: per-element `DataView` (before) vs one typed view + one
 *     finite-check loop (now);
 *   - structure only (`checkInferRequest`, the router now) vs structure + values (backends);
 *   - output encode: JSON vs binary tensors for `output`, `expert_ids`, `expert_weights`.
 */
import { firstNonFinite, readFloat32, splitBinaryBody } from "../../../shared/binary_tensor.ts";
import {
  checkInferRequest,
  decodeInferRequest,
  type DecodeInferRequestOptions,
} from "../../../shared/infer_request_codec.ts";
import { encodeInferResponse, type OutputTensor } from "../../../shared/infer_response_codec.ts";
import type { PreparedRequest } from "../workload.ts";

/** One measured step: µs per request, the best of a few timed passes. */
export interface CodecCost {
  step: string;
  variant: string;
  usPerRequest: number;
}

/** The decoder before this change: one `DataView.getFloat32` per element, then a closure scan. */
function dataViewDecode(bytes: Uint8Array): number {
  const out = new Float32Array(bytes.byteLength / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out.findIndex((v) => !Number.isFinite(v));
}

/** µs per call of one pass of `fn` over `items`, repeated for at least `minMs`. */
function pass<T>(items: readonly T[], fn: (item: T) => unknown, minMs: number): number {
  let calls = 0;
  let kept = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (const item of items) {
      if (fn(item) !== undefined) kept++;
      calls++;
    }
    elapsed = performance.now() - t0;
  }
  if (kept < 0) throw new Error("unreachable"); // keeps the results observable
  return (elapsed * 1000) / calls;
}

/** Two alternatives over the same items, passes interleaved (A B A B …); best pass each. */
function timePair<T>(
  items: readonly T[],
  a: (item: T) => unknown,
  b: (item: T) => unknown,
  passes = 5,
  minMs = 150,
): [number, number] {
  let bestA = Infinity;
  let bestB = Infinity;
  for (let i = 0; i < passes; i++) {
    bestA = Math.min(bestA, pass(items, a, minMs));
    bestB = Math.min(bestB, pass(items, b, minMs));
  }
  return [bestA, bestB];
}

/** Measures every step over `requests` (binary bodies) of a model with `dModel`. */
export function measureCodecCosts(
  requests: readonly PreparedRequest[],
  model: { name: string; dModel: number; layers: number; topK: number },
): CodecCost[] {
  const options = (r: PreparedRequest): DecodeInferRequestOptions => ({
    model: { name: model.name, dModel: model.dModel },
    headerLength: Number(r.headers["inference-header-content-length"]),
    maxTokens: 1 << 20,
  });
  const payloads = requests.map((r) =>
    splitBinaryBody(r.body, Number(r.headers["inference-header-content-length"])).payload
  );
  const outputs = requests.map((r): OutputTensor[] => {
    const routed = [model.layers, r.rows, model.topK];
    const n = model.layers * r.rows * model.topK;
    return [
      {
        name: "output",
        shape: [r.rows, model.dModel],
        data: Float32Array.from({ length: r.rows * model.dModel }, (_, i) => Math.sin(i) * 0.37),
      },
      { name: "expert_ids", shape: routed, data: Int32Array.from({ length: n }, (_, i) => i % 32) },
      {
        name: "expert_weights",
        shape: routed,
        data: Float32Array.from({ length: n }, (_, i) => 0.5 + Math.cos(i) * 0.1),
      },
    ];
  });
  const names = ["output", "expert_ids", "expert_weights"];
  const head = { model_name: model.name, parameters: { backend: "bench" } };
  const [dataView, typed] = timePair(
    payloads,
    dataViewDecode,
    (p) => firstNonFinite(readFloat32(p)),
  );
  const [full, check] = timePair(
    requests,
    (r) => decodeInferRequest(r.body, options(r)),
    (r) => checkInferRequest(r.body, options(r)),
  );
  const [json, binary] = timePair(
    outputs,
    (o) => encodeInferResponse(head, o, new Set()),
    (o) => encodeInferResponse(head, o, new Set(names)),
  );
  return [
    {
      step: "binary input decode",
      variant: "DataView per element (before)",
      usPerRequest: dataView,
    },
    { step: "binary input decode", variant: "typed view + finite loop (now)", usPerRequest: typed },
    { step: "router check", variant: "structure + values (backend)", usPerRequest: full },
    { step: "router check", variant: "structure only (router, now)", usPerRequest: check },
    { step: "output encode", variant: "JSON", usPerRequest: json },
    { step: "output encode", variant: "binary", usPerRequest: binary },
  ];
}
