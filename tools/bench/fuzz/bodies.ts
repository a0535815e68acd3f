/**
 * @module The fuzz cases of `bench:fuzz`: seeded generators of hostile inference
 * requests, one family per fault the router and backends must answer with a 4xx — never
 * a 5xx — plus the valid request interleaved with them. Pure: a case is bytes and
 * headers; sending is the runner's.
 */
import type { Random } from "../../model/prng.ts";

/** Fault families; `slow` and `disconnect` are raw-socket cases the runner plays out. */
export const FUZZ_KINDS = [
  "malformed_json",
  "deep_nesting",
  "wrong_types",
  "huge_shapes",
  "overflow_values",
  "truncated_binary",
  "wrong_header_length",
  "disconnect",
  "slow_body",
] as const;

/** One of {@linkcode FUZZ_KINDS}. */
export type FuzzKind = typeof FUZZ_KINDS[number];

/** One request to send. */
export interface FuzzCase {
  kind: FuzzKind | "valid";
  body: Uint8Array<ArrayBuffer>;
  headers: Record<string, string>;
  /** For `disconnect` and `slow_body`: the bytes sent before stopping (a prefix of `body`). */
  sendBytes?: number;
}

/** The model the cases target. */
export interface FuzzModel {
  dModel: number;
  maxTokens: number;
}

const encoder = new TextEncoder();
const JSON_HEADERS = { "content-type": "application/json" };

const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)]!;
const int = (random: Random, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));

function tokens(random: Random, count: number): number[] {
  return Array.from({ length: count }, () => Math.round((random() * 2 - 1) * 1000) / 1000);
}

function request(input: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ inputs: [{ name: "input", datatype: "FP32", ...input }], ...extra });
}

/** A valid JSON request of 1–4 rows. */
export function validCase(random: Random, model: FuzzModel): FuzzCase {
  const rows = int(random, 1, 4);
  const body = request({ shape: [rows, model.dModel], data: tokens(random, rows * model.dModel) });
  return { kind: "valid", body: encoder.encode(body), headers: JSON_HEADERS };
}

function binaryBody(
  header: unknown,
  payload: Uint8Array,
): { body: Uint8Array<ArrayBuffer>; headerLength: number } {
  const json = encoder.encode(JSON.stringify(header));
  const body = new Uint8Array(json.byteLength + payload.byteLength);
  body.set(json);
  body.set(payload, json.byteLength);
  return { body, headerLength: json.byteLength };
}

/** A hostile case of `kind` (seeded by `random`). */
export function fuzzCase(random: Random, kind: FuzzKind, model: FuzzModel): FuzzCase {
  const d = model.dModel;
  const valid = () => request({ shape: [1, d], data: tokens(random, d) });
  const json = (text: string): FuzzCase => ({
    kind,
    body: encoder.encode(text),
    headers: JSON_HEADERS,
  });
  switch (kind) {
    case "malformed_json": {
      const text = valid();
      return json(
        pick(random, [
          () => text.slice(0, int(random, 0, text.length - 1)),
          () => {
            const at = int(random, 0, text.length - 1);
            // Never the same character again (that would leave the body valid).
            const others = ["{", "]", '"', ",", "\\", "\u0000", "NaN"].filter((c) =>
              c !== text[at]
            );
            return text.slice(0, at) + pick(random, others) + text.slice(at + 1);
          },
          () =>
            String.fromCharCode(
              ...Array.from({ length: int(random, 1, 200) }, () => int(random, 0, 255)),
            ),
          () => "",
          () => text.replace(/,/g, ",,"),
          () => `${text}${text}`,
        ])(),
      );
    }
    case "deep_nesting": {
      const depth = pick(random, [33, 1_000, 100_000, 1_000_000]);
      const where = pick(random, ["data", "parameters", "top"]);
      const deep = `${"[".repeat(depth)}1${"]".repeat(depth)}`;
      if (where === "data") {
        return json(
          `{"inputs":[{"name":"input","shape":[1,${d}],"datatype":"FP32","data":${deep}}]}`,
        );
      }
      if (where === "parameters") {
        return json(
          `{"parameters":{"x":${deep}},"inputs":[{"name":"input","shape":[1,${d}],"datatype":"FP32","data":[${
            tokens(random, d)
          }]}]}`,
        );
      }
      return json(deep);
    }
    case "wrong_types":
      return json(
        pick(random, [
          () => request({ shape: [1, d], data: tokens(random, d).map(String) }),
          () => request({ shape: "1x" + d, data: tokens(random, d) }),
          () => request({ shape: [1, d], data: { a: 1 } }),
          () => request({ shape: [1, d], datatype: 32, data: tokens(random, d) }),
          () => request({ shape: [1, d], data: [null, ...tokens(random, d - 1)] }),
          () => request({ shape: [1.5, d], data: tokens(random, d) }),
          () => JSON.stringify({ inputs: "input" }),
          () => JSON.stringify({ inputs: [42] }),
          () => JSON.stringify([1, 2, 3]),
          () => request({ shape: [1, d], data: tokens(random, d) }, { id: 7 }),
          () => request({ shape: [1, d], data: tokens(random, d) }, { outputs: [{ name: 5 }] }),
          () =>
            request({ shape: [1, d], data: tokens(random, d) }, {
              parameters: { request_type: [] },
            }),
        ])(),
      );
    case "huge_shapes":
      return json(
        pick(random, [
          () => request({ shape: [1e9, d], data: tokens(random, d) }),
          () => request({ shape: [2 ** 53, d], data: tokens(random, d) }),
          () => request({ shape: [model.maxTokens + 1, d], data: tokens(random, d) }),
          () => request({ shape: [-1, d], data: tokens(random, d) }),
          () => request({ shape: [1, d, 1e6], data: tokens(random, d) }),
          () => request({ shape: [1, 2 ** 31], data: tokens(random, d) }),
          () => request({ shape: [0, d], data: [] }),
          () => request({ shape: [2, d], data: tokens(random, 3 * d) }),
        ])(),
      );
    case "overflow_values": {
      const data = tokens(random, d);
      const at = int(random, 0, d - 1);
      const value = pick(random, [
        "1e39",
        "-1e39",
        "3.5e38",
        "1e308",
        "-1.7976931348623157e308",
        "1e400",
      ]);
      const items = data.map(String);
      items[at] = value;
      return json(
        `{"inputs":[{"name":"input","shape":[1,${d}],"datatype":"FP32","data":[${
          items.join(",")
        }]}]}`,
      );
    }
    case "truncated_binary": {
      const rows = int(random, 1, 4);
      const bytes = rows * d * 4;
      const { body, headerLength } = binaryBody(
        {
          inputs: [{
            name: "input",
            shape: [rows, d],
            datatype: "FP32",
            parameters: { binary_data_size: bytes },
          }],
        },
        new Uint8Array(bytes),
      );
      const cut = body.subarray(0, headerLength + int(random, 0, bytes - 1)).slice();
      return {
        kind,
        body: cut,
        headers: {
          "content-type": "application/octet-stream",
          "inference-header-content-length": String(headerLength),
        },
      };
    }
    case "wrong_header_length": {
      const { body, headerLength } = binaryBody(
        {
          inputs: [{
            name: "input",
            shape: [1, d],
            datatype: "FP32",
            parameters: { binary_data_size: d * 4 },
          }],
        },
        new Uint8Array(d * 4),
      );
      const value = pick(random, [
        String(body.byteLength + int(random, 1, 10_000)),
        String(headerLength - int(random, 1, Math.min(headerLength, 20))),
        "-1",
        "0",
        "ten",
        "1e3",
        String(2 ** 60),
        "",
      ]);
      return {
        kind,
        body,
        headers: {
          "content-type": "application/octet-stream",
          "inference-header-content-length": value,
        },
      };
    }
    case "disconnect":
    case "slow_body": {
      const body = encoder.encode(valid());
      return { kind, body, headers: JSON_HEADERS, sendBytes: int(random, 0, body.byteLength - 1) };
    }
  }
}
