/**
 * @module Named generator presets: `deno task gen-model --preset <name>` starts from one of
 * these option sets, and any other flag overrides a field of it.
 *
 * - `demo`: the generator's defaults (32 experts, top-2; docs/MODEL_FORMAT.md).
 * - `bench`: seed-shaped, for the balancing benchmarks — 256 routed experts per layer in 8
 *   groups, top-8 within the 4 best groups, DeepSeek-V3's router family (sigmoid scores,
 *   group score = sum of the best two), 1 shared expert, 3 layers, `d_model` 256 and small
 *   experts (`d_ff` 128: 258 KiB each), so 4 backends of it fit a 2-core machine. The skew
 *   comes from the gate alone, by the demo design (`generate.ts`): each of the 6 request
 *   types prefers 9 experts per layer, all in one group, the types' groups differ; under a
 *   Zipf(1) mix over the types the first type's experts are the bestsellers (top 8 of a
 *   layer ≈ 12× the others' mean load, as the seed's top 8 of 256), and ranking another
 *   type first moves them (`presets_test.ts` measures both from the gate).
 */
import type { GenerateModelOptions } from "./generate.ts";

/** One preset: what it is for, and the generator options it sets. */
export interface ModelPreset {
  /** One line for `--help`. */
  summary: string;
  /** Default output directory of `gen-model`. */
  out: string;
  options: Readonly<GenerateModelOptions>;
}

/** The seed-shaped benchmark model (see the module comment). */
export const BENCH_PRESET: Readonly<GenerateModelOptions> = {
  name: "bench-moe",
  dModel: 256,
  dFf: 128,
  layers: 3,
  experts: 256,
  topK: 8,
  groups: 8,
  topkGroup: 4,
  sharedExperts: 1,
  router: { scoring: "sigmoid", group_score: "sum_top2" },
  seed: 42,
};

/** Every preset, by name. */
export const MODEL_PRESETS: Readonly<Record<string, ModelPreset>> = {
  demo: {
    summary: "2 layers × 32 experts, top-2: the flag defaults below",
    out: "models/demo",
    options: {},
  },
  bench: {
    summary: "seed-shaped: 3 layers × 256 experts, top-8 of 4 of 8 groups, sigmoid, d_ff 128",
    out: "models/bench",
    options: BENCH_PRESET,
  },
};

/** The preset `name`; a `RangeError` names the known ones. */
export function modelPreset(name: string): ModelPreset {
  const preset = Object.hasOwn(MODEL_PRESETS, name) ? MODEL_PRESETS[name] : undefined;
  if (preset === undefined) {
    throw new RangeError(
      `Cannot parse --preset: "${name}" is not one of ${Object.keys(MODEL_PRESETS).join(", ")}`,
    );
  }
  return preset;
}
