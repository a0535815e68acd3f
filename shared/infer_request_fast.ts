/**
 * @module The fast path of {@linkcode InferRequestSchema}: a hand-written check of the
 * plainly valid inference request header that returns what the schema's parse would
 * return (unknown keys dropped, keys in schema order), without the schema machinery
 * (the router's hop runs it once per request; the zod parse measured several times its
 * cost). Anything it is not sure of — a wrong type, a missing field, a `__proto__` key —
 * returns `undefined`, and the caller runs the schema, whose message names the field.
 * `infer_request_fast_test.ts` checks it against the schema on generated headers.
 */
import type { InferRequest } from "./oip.ts";

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype;
}

/** A `parameters` value the schema keeps as is: a plain object without a `__proto__` key. */
function isParameters(value: unknown): value is Json {
  return isPlainObject(value) && !Object.hasOwn(value, "__proto__");
}

function isName(value: unknown): value is string {
  return typeof value === "string" && value.length > 0;
}

function isShape(value: unknown): value is number[] {
  if (!Array.isArray(value)) return false;
  for (const dim of value) {
    if (typeof dim !== "number" || !Number.isSafeInteger(dim) || dim < 0) return false;
  }
  return true;
}

type Input = InferRequest["inputs"][number];
type Output = NonNullable<InferRequest["outputs"]>[number];

function input(value: unknown): Input | undefined {
  if (!isPlainObject(value)) return undefined;
  const { name, shape, datatype, parameters, data } = value;
  if (!isName(name) || !isShape(shape) || typeof datatype !== "string") return undefined;
  if (parameters !== undefined && !isParameters(parameters)) return undefined;
  if (data !== undefined && !Array.isArray(data)) return undefined;
  const checked: Input = { name, shape, datatype };
  if (parameters !== undefined) checked.parameters = parameters;
  if (data !== undefined) checked.data = data;
  return checked;
}

function output(value: unknown): Output | undefined {
  if (!isPlainObject(value)) return undefined;
  const { name, parameters } = value;
  if (!isName(name)) return undefined;
  if (parameters !== undefined && !isParameters(parameters)) return undefined;
  return parameters === undefined ? { name } : { name, parameters };
}

/** `raw` as the schema would parse it, or `undefined` when the schema must judge. */
export function fastInferRequest(raw: unknown): InferRequest | undefined {
  if (!isPlainObject(raw)) return undefined;
  const { id, parameters, inputs, outputs } = raw;
  if (id !== undefined && (typeof id !== "string" || id.length > 256)) return undefined;
  if (parameters !== undefined && !isParameters(parameters)) return undefined;
  if (!Array.isArray(inputs) || inputs.length === 0) return undefined;
  if (outputs !== undefined && !Array.isArray(outputs)) return undefined;
  const request = {} as InferRequest;
  if (id !== undefined) request.id = id;
  if (parameters !== undefined) request.parameters = parameters;
  request.inputs = [];
  for (const value of inputs) {
    const checked = input(value);
    if (checked === undefined) return undefined;
    request.inputs.push(checked);
  }
  if (outputs !== undefined) {
    request.outputs = [];
    for (const value of outputs) {
      const checked = output(value);
      if (checked === undefined) return undefined;
      request.outputs.push(checked);
    }
  }
  return request;
}
