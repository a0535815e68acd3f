/**
 * @module Test support: an OIP v2 client over fetch (JSON or binary), returning the
 * decoded tensors and the raw response.
 */
import {
  encodeInferRequest,
  type EncodeInferRequestOptions,
} from "../../shared/infer_request_codec.ts";
import {
  type DecodedInferResponse,
  decodeInferResponse,
} from "../../shared/infer_response_codec.ts";

/** Result of {@linkcode infer}. */
export interface InferCall {
  status: number;
  headers: Headers;
  /** Decoded response when status is 200. */
  decoded: DecodedInferResponse | null;
  /** Parsed JSON error body otherwise. */
  error: { error: string; code: string } | null;
}

/** Posts one inference request to `baseUrl` for `model`. */
export async function infer(
  baseUrl: string,
  model: string,
  tokens: Float32Array,
  dModel: number,
  options: EncodeInferRequestOptions & { headers?: Record<string, string> } = {},
): Promise<InferCall> {
  const { body, headerLength } = encodeInferRequest(tokens, dModel, options);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...options.headers,
  };
  if (headerLength !== null) headers["inference-header-content-length"] = String(headerLength);
  return await postRaw(`${baseUrl}/v2/models/${model}/infer`, body, headers);
}

/** Posts raw bytes and decodes the answer. */
export async function postRaw(
  url: string,
  body: Uint8Array<ArrayBuffer> | string,
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<InferCall> {
  const response = await fetch(url, { method: "POST", body, headers });
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (response.status !== 200) {
    return {
      status: response.status,
      headers: response.headers,
      decoded: null,
      error: JSON.parse(new TextDecoder().decode(bytes)),
    };
  }
  const length = response.headers.get("inference-header-content-length");
  return {
    status: 200,
    headers: response.headers,
    decoded: decodeInferResponse(bytes, length === null ? null : Number(length)),
    error: null,
  };
}

/** Largest absolute difference between two arrays of equal length. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new RangeError(`length ${a.length} != ${b.length}`);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

/**
 * Waits (up to 120 s) until the router at `baseUrl` reports at least `count` healthy
 * backends in `/v2/health/ready`; a readiness wait for a pool that is merely slow.
 */
export async function waitHealthyBackends(baseUrl: string, count: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const body = await (await fetch(`${baseUrl}/v2/health/ready`)).json();
      const healthy = body?.details?.healthy_backends;
      if (typeof healthy === "number" && healthy >= count) return;
      last = `${healthy} healthy`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${baseUrl} did not report ${count} healthy backends in 120 s (${last})`);
}
