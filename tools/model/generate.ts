/**
 * @module Generates a deterministic demo MoE model directory: `moe.json`, one ONNX file per
 * gate / routed expert / shared expert, and `demo_traffic.json`.
 *
 * Design. The weights are random but shaped so request types have real hot experts:
 * - each request type `t` gets a random unit direction `u_t` in `R^d_model`;
 * - per layer, each type prefers `p = max(3, top_k + 1)` experts (capped by what
 *   `topk_group` groups hold), packed into as few groups as possible and spread over the
 *   least-used experts first, so types mostly differ and the sets change per layer;
 * - gate column `e` = gaussian noise (logit noise ≈ 1 for a demo token) + `α · u_t` for
 *   every type `t` preferring `e`, with `α · signal = GATE_MARGIN`: tokens of type `t`
 *   pick `t`'s experts most of the time but not always;
 * - expert weights (MLP `w1`/`w2`, or SwiGLU `w_gate`/`w_up`/`w_down`) are gaussian with
 *   std `1 / sqrt(fan_in)`, the output matrix scaled by `EXPERT_OUTPUT_SCALE`, so residual
 *   updates stay O(1) and later layers still see `u_t`.
 * Every part draws from its own stream `deriveSeed(seed, kind, layer, index)`: the same
 * seed gives the same bytes, whatever the generation order.
 */
import { dirname, join } from "node:path";
import {
  listModelParts,
  type ModelManifest,
  ModelManifestSchema,
  type ModelPart,
  modelPartPath,
  type RouterSettings,
} from "../../shared/model_manifest.ts";
import { buildExpertModel, buildGateModel } from "./onnx_graphs.ts";
import { createGaussian, createRandom, deriveSeed, gaussianArray, type Random } from "./prng.ts";
import { DEMO_TRAFFIC_FILE, type DemoTraffic } from "./traffic.ts";
import type { ExpertWeights, GateWeights } from "./weights.ts";

/** File name of the manifest inside a model directory. */
export const MANIFEST_FILE = "moe.json";

/** Request types of the demo model, in Zipf rank order. */
export const DEFAULT_REQUEST_TYPES = ["chat", "code", "math", "translate", "summarize", "search"];

/** Length of the type direction in a demo token. */
export const DEMO_SIGNAL = 4;
/** Per-component standard deviation of the noise in a demo token. */
export const DEMO_NOISE = 1;
/** Logit boost (in units of logit noise) a type's direction gives its preferred experts. */
export const GATE_MARGIN = 3;
/** Scale of expert output weights relative to `1 / sqrt(d_ff)`. */
export const EXPERT_OUTPUT_SCALE = 0.5;

/** Options of `generateModel`; every field has a default. */
export interface GenerateModelOptions {
  /** Model name (default `"demo-moe"`). */
  name?: string;
  /** Hidden width (default 256). */
  dModel?: number;
  /** Expert inner width (default 1024). */
  dFf?: number;
  /** MoE layers (default 2). */
  layers?: number;
  /** Routed experts per layer (default 32). */
  experts?: number;
  /** Experts per token (default 2). */
  topK?: number;
  /** Expert groups (default 4). */
  groups?: number;
  /** Groups kept per token (default 2). */
  topkGroup?: number;
  /** Shared experts per layer (default 1). */
  sharedExperts?: number;
  /** Expert activation (default `"silu"`). */
  activation?: ModelManifest["activation"];
  /** Expert graph kind (default `"mlp"`). */
  expertKind?: ModelManifest["expert_kind"];
  /** Storage of the weight matrices (default `"float32"`). */
  weightDtype?: ModelManifest["weight_dtype"];
  /** Routing family (default: softmax, group score max, renormalised, scale 1). */
  router?: Partial<RouterSettings>;
  /** PRNG seed (default 42). */
  seed?: number;
  /** Request types with distinct expert preferences (default `DEFAULT_REQUEST_TYPES`). */
  requestTypes?: string[];
  /** Called after each ONNX file is written, with files done and the total (progress lines). */
  onProgress?: (written: number, total: number) => void;
}

const STREAM = { direction: 1, preference: 2, gate: 3, expert: 4, shared: 5 } as const;

/** Writes a demo model into `dir` (created if needed) and returns its manifest. */
export async function generateModel(
  dir: string,
  options: GenerateModelOptions = {},
): Promise<ModelManifest> {
  // Step 1: resolve and validate the manifest before writing anything.
  const manifest = resolveManifest(options);
  const seed = options.seed ?? 42;
  const types = manifest.request_types;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.remove(join(dir, MANIFEST_FILE)).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });

  // Step 2: request-type directions and per-layer expert preferences.
  const directions = types.map((_, t) =>
    unitVector(manifest.d_model, deriveSeed(seed, STREAM.direction, t))
  );
  const preferred = Array.from(
    { length: manifest.layers },
    (_, layer) =>
      preferredExperts(manifest, createRandom(deriveSeed(seed, STREAM.preference, layer))),
  );

  // Step 3: the ONNX files; the manifest goes last so a half-written directory has none.
  const parts = listModelParts(manifest);
  const graph = { weightDtype: manifest.weight_dtype };
  for (const [index, part] of parts.entries()) {
    const bytes = part.kind === "gate"
      ? buildGateModel(
        gateWeights(manifest, directions, preferred[part.layer]!, seed, part.layer),
        graph,
      )
      : buildExpertModel(expertWeights(manifest, seed, part), manifest.activation, graph);
    const path = join(dir, modelPartPath(manifest, part));
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeFile(path, bytes);
    options.onProgress?.(index + 1, parts.length);
  }
  const traffic: DemoTraffic = {
    request_types: types,
    directions,
    signal: DEMO_SIGNAL,
    noise: DEMO_NOISE,
    preferred_experts: preferred,
  };
  await Deno.writeTextFile(join(dir, DEMO_TRAFFIC_FILE), JSON.stringify(traffic) + "\n");
  await Deno.writeTextFile(join(dir, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

function resolveManifest(options: GenerateModelOptions): ModelManifest {
  const requestTypes = options.requestTypes ?? DEFAULT_REQUEST_TYPES;
  const duplicate = requestTypes.find((type, i) => requestTypes.indexOf(type) !== i);
  if (duplicate !== undefined) {
    throw new RangeError(`Cannot generate model: request type "${duplicate}" appears twice`);
  }
  const parsed = ModelManifestSchema.safeParse({
    name: options.name ?? "demo-moe",
    d_model: options.dModel ?? 256,
    d_ff: options.dFf ?? 1024,
    layers: options.layers ?? 2,
    experts: options.experts ?? 32,
    top_k: options.topK ?? 2,
    groups: options.groups ?? 4,
    topk_group: options.topkGroup ?? 2,
    shared_experts: options.sharedExperts ?? 1,
    activation: options.activation ?? "silu",
    expert_kind: options.expertKind ?? "mlp",
    weight_dtype: options.weightDtype ?? "float32",
    router: options.router ?? {},
    request_types: requestTypes,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RangeError(`Cannot generate model: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}

/** A random unit vector (rounded to float32 so the JSON and the weights agree). */
function unitVector(width: number, seed: number): number[] {
  const values = gaussianArray(createGaussian(createRandom(seed)), width);
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0));
  return Array.from(values, (value) => Math.fround(value / norm));
}

/** `[type]` → the sorted experts a type prefers in one layer (see the module design). */
function preferredExperts(manifest: ModelManifest, random: Random): number[][] {
  const groupSize = manifest.experts / manifest.groups;
  const topkGroup = manifest.topk_group ?? manifest.groups;
  const count = Math.min(Math.max(3, manifest.top_k + 1), topkGroup * groupSize);
  const groupsNeeded = Math.ceil(count / groupSize);
  const usage = new Int32Array(manifest.experts);
  const byUsage = (score: (index: number) => number, indices: number[]) =>
    indices
      .map((index) => ({ index, score: score(index), tie: random() }))
      .sort((a, b) => a.score - b.score || a.tie - b.tie)
      .map(({ index }) => index);
  return manifest.request_types.map(() => {
    const groupUsage = (g: number) =>
      usage.subarray(g * groupSize, (g + 1) * groupSize).reduce((a, b) => a + b, 0);
    const groups = byUsage(groupUsage, range(manifest.groups)).slice(0, groupsNeeded);
    const candidates = groups.flatMap((g) => range(groupSize).map((i) => g * groupSize + i));
    const chosen = byUsage((e) => usage[e]!, candidates).slice(0, count).sort((a, b) => a - b);
    for (const expert of chosen) usage[expert]!++;
    return chosen;
  });
}

function gateWeights(
  manifest: ModelManifest,
  directions: number[][],
  preferred: number[][],
  seed: number,
  layer: number,
): GateWeights {
  const { d_model: dModel, experts } = manifest;
  const gaussian = createGaussian(createRandom(deriveSeed(seed, STREAM.gate, layer)));
  const tokenNorm = Math.sqrt(DEMO_SIGNAL ** 2 + DEMO_NOISE ** 2 * dModel);
  const weight = gaussianArray(gaussian, dModel * experts, 1 / tokenNorm);
  const alpha = GATE_MARGIN / DEMO_SIGNAL;
  preferred.forEach((chosen, t) => {
    const direction = directions[t]!;
    for (const expert of chosen) {
      for (let i = 0; i < dModel; i++) weight[i * experts + expert]! += alpha * direction[i]!;
    }
  });
  return { dModel, experts, weight, bias: gaussianArray(gaussian, experts, 0.1) };
}

function expertWeights(manifest: ModelManifest, seed: number, part: ModelPart): ExpertWeights {
  const { d_model: dModel, d_ff: dFf } = manifest;
  const stream = part.kind === "shared" ? STREAM.shared : STREAM.expert;
  const index = part.kind === "gate" ? 0 : part.expert;
  const gaussian = createGaussian(createRandom(deriveSeed(seed, stream, part.layer, index)));
  if (manifest.expert_kind === "swiglu") {
    return {
      kind: "swiglu",
      dModel,
      dFf,
      wGate: gaussianArray(gaussian, dModel * dFf, 1 / Math.sqrt(dModel)),
      wUp: gaussianArray(gaussian, dModel * dFf, 1 / Math.sqrt(dModel)),
      wDown: gaussianArray(gaussian, dFf * dModel, EXPERT_OUTPUT_SCALE / Math.sqrt(dFf)),
    };
  }
  return {
    kind: "mlp",
    dModel,
    dFf,
    w1: gaussianArray(gaussian, dModel * dFf, 1 / Math.sqrt(dModel)),
    b1: gaussianArray(gaussian, dFf, 0.1),
    w2: gaussianArray(gaussian, dFf * dModel, EXPERT_OUTPUT_SCALE / Math.sqrt(dFf)),
    b2: gaussianArray(gaussian, dModel, 0.02),
  };
}

function range(length: number): number[] {
  return Array.from({ length }, (_, i) => i);
}
