/**
 * @module The generator's option table: one entry per `--flag` of `deno task gen-model`,
 * saying what it sets and how its value is parsed (a help text can be printed from it).
 * A new option is one more entry here.
 */
import { ACTIVATIONS, EXPERT_KINDS } from "../../shared/model_manifest.ts";
import type { GenerateModelOptions } from "./generate.ts";

/** One generator flag: its help line and how its value lands in the options. */
export interface GeneratorFlag {
  help: string;
  apply(options: GenerateModelOptions, raw: string, flag: string): void;
}

function integer(key: IntegerKey, help: string): GeneratorFlag {
  return {
    help,
    apply(options, raw, flag) {
      const value = Number(raw);
      if (!Number.isInteger(value)) {
        throw new RangeError(`Cannot parse --${flag}: "${raw}" is not an integer`);
      }
      options[key] = value;
    },
  };
}

function choice<T extends string>(
  values: readonly T[],
  set: (options: GenerateModelOptions, value: T) => void,
  help: string,
): GeneratorFlag {
  return {
    help: `${help} (${values.join(" | ")})`,
    apply(options, raw, flag) {
      if (!(values as readonly string[]).includes(raw)) {
        throw new RangeError(`Cannot parse --${flag}: "${raw}" is not one of ${values.join(", ")}`);
      }
      set(options, raw as T);
    },
  };
}

type IntegerKey =
  | "seed"
  | "dModel"
  | "dFf"
  | "layers"
  | "experts"
  | "topK"
  | "groups"
  | "topkGroup"
  | "sharedExperts";

/** Every generator flag, by name (without `--`). */
export const GENERATOR_FLAGS: Record<string, GeneratorFlag> = {
  "name": { help: "model name (default demo-moe)", apply: (o, raw) => o.name = raw },
  "seed": integer("seed", "PRNG seed (default 42)"),
  "d-model": integer("dModel", "hidden width (default 256)"),
  "d-ff": integer("dFf", "expert inner width (default 1024)"),
  "layers": integer("layers", "MoE layers (default 2)"),
  "experts": integer("experts", "routed experts per layer (default 32)"),
  "top-k": integer("topK", "experts per token (default 2)"),
  "groups": integer("groups", "expert groups (default 4)"),
  "topk-group": integer("topkGroup", "groups kept per token (default 2)"),
  "shared": integer("sharedExperts", "shared experts per layer (default 1)"),
  "activation": choice(ACTIVATIONS, (o, v) => o.activation = v, "expert activation"),
  "expert-kind": choice(EXPERT_KINDS, (o, v) => o.expertKind = v, "expert graph kind"),
  "weight-dtype": choice(
    ["float32", "float16"] as const,
    (o, v) => o.weightDtype = v,
    "storage of the weight matrices",
  ),
  "scoring": choice(
    ["softmax", "sigmoid"] as const,
    (o, v) => o.router = { ...o.router, scoring: v },
    "router scoring",
  ),
  "group-score": choice(
    ["max", "sum_top2"] as const,
    (o, v) => o.router = { ...o.router, group_score: v },
    "group score of the group limit",
  ),
  "norm-topk-prob": choice(
    ["true", "false"] as const,
    (o, v) => o.router = { ...o.router, norm_topk_prob: v === "true" },
    "renormalise the top-k weights",
  ),
  "routed-scaling-factor": {
    help: "factor on the routed weights (default 1)",
    apply(o, raw, flag) {
      const value = Number(raw);
      if (!(value > 0) || !Number.isFinite(value)) {
        throw new RangeError(`Cannot parse --${flag}: "${raw}" is not a positive number`);
      }
      o.router = { ...o.router, routed_scaling_factor: value };
    },
  },
};
