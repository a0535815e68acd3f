/**
 * @module Test helpers that build inference requests and post them to a router app.
 */
import {
  encodeInferRequest,
  type EncodeInferRequestOptions,
} from "../../../shared/infer_request_codec.ts";
import { HEADER_LENGTH_HEADER } from "../../../shared/oip.ts";
import type { Harness } from "./harness.ts";

/** A body and the headers that go with it. */
export interface TestRequest {
  body: Uint8Array<ArrayBuffer>;
  headers: Record<string, string>;
}

/** A valid request for model "tiny" (d_model 4) with `rows` token rows 0, 1, 2, … */
export function tinyRequest(rows = 2, options: EncodeInferRequestOptions = {}): TestRequest {
  const tokens = Float32Array.from({ length: rows * 4 }, (_, i) => i * 0.5);
  const { body, headerLength } = encodeInferRequest(tokens, 4, options);
  const headers: Record<string, string> = headerLength === null
    ? { "content-type": "application/json" }
    : { "content-type": "application/octet-stream", [HEADER_LENGTH_HEADER]: String(headerLength) };
  return { body: body as Uint8Array<ArrayBuffer>, headers };
}

/** A raw JSON request body (any shape), as bytes. */
export function jsonRequest(value: unknown): TestRequest {
  return {
    body: new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value)),
    headers: { "content-type": "application/json" },
  };
}

/** POSTs `request` to `/v2/models/{model}/infer` on the harness app. */
export function postInfer(
  harness: Harness,
  request: TestRequest,
  options: { model?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return Promise.resolve(
    harness.app.request(`/v2/models/${options.model ?? "tiny"}/infer`, {
      method: "POST",
      body: request.body,
      headers: { ...request.headers, ...options.headers },
    }),
  );
}
