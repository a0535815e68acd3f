/**
 * @module Demo request traffic: token rows shaped like each request type of a generated
 * model (`demo_traffic.json`), a gaussian fallback for other models, and a Zipf sampler
 * over request types for load generators.
 *
 * A demo token of type `t` is `signal · u_t + noise · z` with `u_t` the type's unit
 * direction and `z` standard normal per component; the generator aligned the gate columns
 * of `t`'s preferred experts with `u_t`, so such tokens mostly pick those experts.
 */
import { join } from "node:path";
import { z } from "zod";
import { createGaussian, type Random } from "./prng.ts";

/** File name of the demo traffic description inside a model directory. */
export const DEMO_TRAFFIC_FILE = "demo_traffic.json";

/** Schema of `demo_traffic.json`. */
export const DemoTrafficSchema = z.object({
  request_types: z.array(z.string().min(1)),
  /** One unit `d_model` vector per request type. */
  directions: z.array(z.array(z.number())),
  /** Length of the type direction in a token. */
  signal: z.number().nonnegative(),
  /** Standard deviation of the per-component noise in a token. */
  noise: z.number().nonnegative(),
  /** `[layer][type]` → experts the generator made that type prefer (informational). */
  preferred_experts: z.array(z.array(z.array(z.int().nonnegative()))).default([]),
}).superRefine((traffic, ctx) => {
  if (traffic.directions.length !== traffic.request_types.length) {
    ctx.addIssue({
      code: "custom",
      path: ["directions"],
      message: "must hold one per request type",
    });
  }
  const width = traffic.directions[0]?.length ?? 0;
  if (traffic.directions.some((direction) => direction.length !== width)) {
    ctx.addIssue({
      code: "custom",
      path: ["directions"],
      message: "must all have the same length",
    });
  }
});

/** A parsed `demo_traffic.json`. */
export type DemoTraffic = z.infer<typeof DemoTrafficSchema>;

/** `rows` demo tokens `[rows, d_model]` of one request type. */
export function demoTokens(
  traffic: DemoTraffic,
  requestType: string,
  rows: number,
  random: Random,
): Float32Array {
  const index = traffic.request_types.indexOf(requestType);
  const direction = traffic.directions[index];
  if (direction === undefined) {
    throw new RangeError(
      `Cannot make demo tokens: unknown request type "${requestType}" (known: ${
        traffic.request_types.join(", ")
      })`,
    );
  }
  const gaussian = createGaussian(random);
  const width = direction.length;
  const tokens = new Float32Array(rows * width);
  for (let row = 0; row < rows; row++) {
    for (let i = 0; i < width; i++) {
      tokens[row * width + i] = traffic.signal * direction[i]! + traffic.noise * gaussian();
    }
  }
  return tokens;
}

/** `rows` standard-normal tokens `[rows, dModel]`, for models without demo traffic. */
export function gaussianTokens(dModel: number, rows: number, random: Random): Float32Array {
  const gaussian = createGaussian(random);
  return Float32Array.from({ length: dModel * rows }, () => gaussian());
}

/** The demo traffic of a model directory, or `undefined` when it has no `demo_traffic.json`. */
export async function loadDemoTraffic(dir: string): Promise<DemoTraffic | undefined> {
  const path = join(dir, DEMO_TRAFFIC_FILE);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const parsed = DemoTrafficSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TypeError(
      `Cannot load demo traffic "${path}": ${issue?.path.join(".")}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

/**
 * A sampler of request types with Zipf weights: the type at rank `r` (1-based, in the
 * given order) is drawn with probability ∝ `1 / r^s`; `s = 0` is uniform.
 */
export function zipfRequestTypes(
  types: readonly string[],
  s: number,
  random: Random,
): () => string {
  if (types.length === 0) throw new RangeError("Cannot sample request types: the list is empty");
  if (!(s >= 0) || !Number.isFinite(s)) {
    throw new RangeError(
      `Cannot sample request types: Zipf exponent must be finite and >= 0, got ${s}`,
    );
  }
  const cumulative: number[] = [];
  let total = 0;
  types.forEach((_, rank) => {
    total += 1 / Math.pow(rank + 1, s);
    cumulative.push(total);
  });
  return () => {
    const target = random() * total;
    const index = cumulative.findIndex((bound) => target < bound);
    return types[index < 0 ? types.length - 1 : index]!;
  };
}
