/**
 * @module The demo workload: request bodies of demo-traffic tokens with Zipf-skewed
 * request types and small, varied sizes (or a given range), binary or JSON, pre-encoded so
 * the load generator spends its time sending, not encoding.
 */
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import { createRandom, type Random } from "../model/prng.ts";
import {
  demoTokens,
  type DemoTraffic,
  gaussianTokens,
  zipfRequestTypes,
} from "../model/traffic.ts";

/** One pre-encoded request. */
export interface PreparedRequest {
  body: Uint8Array<ArrayBuffer>;
  headers: Record<string, string>;
  rows: number;
  requestType: string;
}

/** Options of {@linkcode prepareWorkload}. */
export interface WorkloadOptions {
  dModel: number;
  traffic: DemoTraffic | undefined;
  /** Distinct requests to prepare (cycled by the generator). */
  count?: number;
  /** Zipf exponent over request types (default 1.1: a few types dominate). */
  zipf?: number;
  /** Request types from most to least frequent; default the model's own order. */
  typeOrder?: readonly string[];
  /** Largest request in rows (default 16). */
  maxRows?: number;
  /** Rows per request drawn uniformly from `[min, max]` instead of the default sizes. */
  tokens?: { min: number; max: number };
  /** Binary tensor extension (default) or plain JSON bodies. */
  binary?: boolean;
  /** Every request this many rows (instead of drawn sizes). */
  rows?: number;
  seed?: number;
  /** Extra headers (e.g. authorization for a backend called directly). */
  headers?: Record<string, string>;
}

/** Request size: 1 + geometric(mean ≈ 3), capped — mostly short, a few long. */
export function drawRows(random: Random, maxRows: number): number {
  const p = 1 / 3;
  const extra = Math.floor(Math.log(1 - random()) / Math.log(1 - p));
  return Math.min(1 + extra, maxRows);
}

/** `--tokens <min>-<max>` as a range; a `RangeError` names the option. */
export function tokenRange(text: string): { min: number; max: number } {
  const match = /^(\d+)-(\d+)$/.exec(text.trim());
  const [min, max] = match ? [Number(match[1]), Number(match[2])] : [Number.NaN, Number.NaN];
  if (!(min >= 1 && max >= min)) {
    throw new RangeError(
      `Cannot parse --tokens: expected <min>-<max> with 1 <= min <= max, got "${text}"`,
    );
  }
  return { min, max };
}

/** Prepares `count` binary-encoded requests. */
export function prepareWorkload(options: WorkloadOptions): PreparedRequest[] {
  const random = createRandom(options.seed ?? 1);
  const types = options.typeOrder ?? options.traffic?.request_types ?? ["default"];
  const pickType = zipfRequestTypes(types, options.zipf ?? 1.1, random);
  const binary = options.binary ?? true;
  const tokens = options.tokens;
  return Array.from({ length: options.count ?? 512 }, () => {
    const rows = options.rows ??
      (tokens
        ? tokens.min + Math.floor(random() * (tokens.max - tokens.min + 1))
        : drawRows(random, options.maxRows ?? 16));
    const requestType = pickType();
    const values = options.traffic
      ? demoTokens(options.traffic, requestType, rows, random)
      : gaussianTokens(options.dModel, rows, random);
    const { body, headerLength } = encodeInferRequest(values, options.dModel, {
      requestType,
      binaryInput: binary,
      binaryOutputs: binary,
    });
    return {
      body,
      rows,
      requestType,
      headers: {
        "content-type": binary ? "application/octet-stream" : "application/json",
        ...(headerLength !== null
          ? { "inference-header-content-length": String(headerLength) }
          : {}),
        ...options.headers,
      },
    };
  });
}
