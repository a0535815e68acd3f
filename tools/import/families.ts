/**
 * @module What `config.json` says about a checkpoint's MoE layers, per family
 * (`model_type`): which decoder layers are MoE, the router block (routing.ts has the
 * formulas), expert sizes, activation, the pre-MoE norm's epsilon, and the tensor names.
 *
 * Families and their tensor names (`model.layers.{i}.` prefix):
 * - `mixtral`: `block_sparse_moe.gate.weight`, `block_sparse_moe.experts.{j}.w1|w3|w2.weight`
 *   (gate, up, down); every layer is MoE.
 * - `qwen2_moe`: `mlp.gate.weight`, `mlp.experts.{j}.gate_proj|up_proj|down_proj.weight`,
 *   `mlp.shared_expert.*_proj.weight`, `mlp.shared_expert_gate.weight` (sigmoid-gated);
 *   MoE where `i ∉ mlp_only_layers` and `(i + 1) % decoder_sparse_step == 0`.
 * - `qwen3_moe`: as qwen2_moe without shared experts.
 * - `olmoe`: `mlp.gate.weight`, `mlp.experts.{j}.*_proj.weight`; every layer is MoE.
 * - `deepseek_v2`, `deepseek_v3`: `mlp.gate.weight` (+ `mlp.gate.e_score_correction_bias`
 *   for V3), `mlp.experts.{j}.*_proj.weight`, `mlp.shared_experts.*_proj.weight` (the
 *   `n_shared_experts` fused into one MLP); MoE where `i ≥ first_k_dense_replace` and
 *   `i % moe_layer_freq == 0`.
 * Every family's pre-MoE norm is `post_attention_layernorm` (RMSNorm, `rms_norm_eps`).
 */
import type { Activation } from "../model/weights.ts";
import type { RouterSettings } from "../../shared/model_manifest.ts";

/** Tensor names of one expert's projections (PyTorch `[out, in]` layout). */
export interface ExpertNames {
  gate: string;
  up: string;
  down: string;
}

/** Everything the importer needs from one family's config. */
export interface FamilyPlan {
  modelType: string;
  hidden: number;
  /** Decoder layers of the checkpoint. */
  decoderLayers: number;
  /** Checkpoint indices of the MoE layers, ascending (the served layers, in order). */
  moeLayers: number[];
  experts: number;
  topK: number;
  groups: number;
  topkGroup: number;
  router: Omit<RouterSettings, "e_score_correction_bias">;
  /** Whether each MoE layer has an `e_score_correction_bias` tensor. */
  correctionBias: boolean;
  expertFf: number;
  /** Inner width of the (one, fused) shared expert; 0 = none. */
  sharedFf: number;
  /** Whether the shared expert's output is scaled by `sigmoid(x · shared_expert_gate)`. */
  sharedGate: boolean;
  activation: Activation;
  epsilon: number;
  names: {
    norm(layer: number): string;
    gate(layer: number): string;
    bias(layer: number): string;
    expert(layer: number, expert: number): ExpertNames;
    shared(layer: number): ExpertNames;
    sharedGate(layer: number): string;
  };
}

/** The `model_type`s `deno task import` reads. */
export const FAMILIES = [
  "mixtral",
  "qwen2_moe",
  "qwen3_moe",
  "olmoe",
  "deepseek_v2",
  "deepseek_v3",
] as const;

/** Reads `config` into a plan; throws a RangeError naming the config field. */
export function planFamily(config: Record<string, unknown>): FamilyPlan {
  const field = configReader(config);
  const modelType = field.string("model_type");
  if (!(FAMILIES as readonly string[]).includes(modelType)) {
    throw new RangeError(
      `Cannot import: config.json model_type "${modelType}" is not one of ${FAMILIES.join(", ")}`,
    );
  }
  const decoderLayers = field.int("num_hidden_layers");
  const layers = Array.from({ length: decoderLayers }, (_, i) => i);
  const prefix = (i: number) => `model.layers.${i}.`;
  const proj = (base: string): ExpertNames => ({
    gate: `${base}.gate_proj.weight`,
    up: `${base}.up_proj.weight`,
    down: `${base}.down_proj.weight`,
  });
  const mlpNames = {
    norm: (i: number) => `${prefix(i)}post_attention_layernorm.weight`,
    gate: (i: number) => `${prefix(i)}mlp.gate.weight`,
    bias: (i: number) => `${prefix(i)}mlp.gate.e_score_correction_bias`,
    expert: (i: number, j: number) => proj(`${prefix(i)}mlp.experts.${j}`),
    shared: (i: number) =>
      proj(`${prefix(i)}mlp.${modelType === "qwen2_moe" ? "shared_expert" : "shared_experts"}`),
    sharedGate: (i: number) => `${prefix(i)}mlp.shared_expert_gate.weight`,
  };
  const common = {
    modelType,
    hidden: field.int("hidden_size"),
    decoderLayers,
    topK: field.int("num_experts_per_tok"),
    activation: activationOf(field.string("hidden_act", "silu")),
    epsilon: field.number("rms_norm_eps"),
    groups: 1,
    topkGroup: 1,
    correctionBias: false,
    sharedFf: 0,
    sharedGate: false,
    names: mlpNames,
  };
  const softmax = (norm: boolean, scale = 1) => ({
    scoring: "softmax" as const,
    group_score: "max" as const,
    norm_topk_prob: norm,
    routed_scaling_factor: scale,
  });
  switch (modelType) {
    case "mixtral":
      return {
        ...common,
        moeLayers: layers,
        experts: field.int("num_local_experts"),
        expertFf: field.int("intermediate_size"),
        router: softmax(true),
        names: {
          ...mlpNames,
          gate: (i) => `${prefix(i)}block_sparse_moe.gate.weight`,
          expert: (i, j) => {
            const base = `${prefix(i)}block_sparse_moe.experts.${j}`;
            return {
              gate: `${base}.w1.weight`,
              up: `${base}.w3.weight`,
              down: `${base}.w2.weight`,
            };
          },
        },
      };
    case "olmoe":
      return {
        ...common,
        moeLayers: layers,
        experts: field.int("num_experts"),
        expertFf: field.int("intermediate_size"),
        router: softmax(field.boolean("norm_topk_prob", false)),
      };
    case "qwen2_moe":
    case "qwen3_moe": {
      const step = field.int("decoder_sparse_step", 1);
      const dense = field.intList("mlp_only_layers", []);
      const experts = field.int("num_experts");
      return {
        ...common,
        moeLayers: layers.filter((i) => !dense.includes(i) && experts > 0 && (i + 1) % step === 0),
        experts,
        expertFf: field.int("moe_intermediate_size"),
        router: softmax(field.boolean("norm_topk_prob", false)),
        ...(modelType === "qwen2_moe"
          ? { sharedFf: field.int("shared_expert_intermediate_size"), sharedGate: true }
          : {}),
      };
    }
    default: {
      // deepseek_v2, deepseek_v3
      const first = field.int("first_k_dense_replace", 0);
      const freq = field.int("moe_layer_freq", 1);
      const expertFf = field.int("moe_intermediate_size");
      const method = field.string(
        "topk_method",
        modelType === "deepseek_v3" ? "noaux_tc" : "greedy",
      );
      const grouped = method !== "greedy";
      const groups = grouped ? field.int("n_group") : 1;
      const topkGroup = grouped ? field.int("topk_group") : 1;
      const norm = field.boolean("norm_topk_prob", false);
      const scale = field.number("routed_scaling_factor", 1);
      const shared = field.int("n_shared_experts", 0);
      const plan = {
        ...common,
        moeLayers: layers.filter((i) => i >= first && i % freq === 0),
        experts: field.int("n_routed_experts"),
        expertFf,
        groups,
        topkGroup,
        sharedFf: shared * expertFf,
      };
      if (modelType === "deepseek_v2") {
        if (method !== "greedy" && method !== "group_limited_greedy") {
          throw new RangeError(
            `Cannot import: config.json topk_method "${method}" is not greedy or group_limited_greedy`,
          );
        }
        // DeepSeek-V2's own modelling code: renormalise (unscaled) when norm_topk_prob and
        // top_k > 1, else scale by routed_scaling_factor.
        const renormalise = norm && common.topK > 1;
        return { ...plan, router: softmax(renormalise, renormalise ? 1 : scale) };
      }
      if (method !== "noaux_tc" || field.string("scoring_func", "sigmoid") !== "sigmoid") {
        throw new RangeError(
          `Cannot import: deepseek_v3 needs topk_method noaux_tc with scoring_func sigmoid`,
        );
      }
      return {
        ...plan,
        correctionBias: true,
        router: {
          scoring: "sigmoid",
          group_score: "sum_top2",
          norm_topk_prob: norm,
          routed_scaling_factor: scale,
        },
      };
    }
  }
}

function activationOf(hiddenAct: string): Activation {
  const known: Record<string, Activation> = {
    silu: "silu",
    swish: "silu",
    gelu: "gelu",
    gelu_pytorch_tanh: "gelu_tanh",
    gelu_new: "gelu_tanh",
    relu: "relu",
  };
  const activation = known[hiddenAct];
  if (activation === undefined) {
    throw new RangeError(
      `Cannot import: config.json hidden_act "${hiddenAct}" is not one of ${
        Object.keys(known).join(", ")
      }`,
    );
  }
  return activation;
}

/** Typed access to config fields; a missing or mistyped field names itself. */
function configReader(config: Record<string, unknown>) {
  const get = <T>(name: string, check: (v: unknown) => boolean, kind: string, fallback?: T): T => {
    const value = config[name];
    if ((value === undefined || value === null) && fallback !== undefined) return fallback;
    if (!check(value)) {
      throw new RangeError(
        `Cannot import: config.json ${name} must be ${kind}, got ${JSON.stringify(value)}`,
      );
    }
    return value as T;
  };
  return {
    int: (name: string, fallback?: number) =>
      get(name, (v) => Number.isInteger(v) && (v as number) >= 0, "an integer >= 0", fallback),
    number: (name: string, fallback?: number) =>
      get(
        name,
        (v) => typeof v === "number" && v > 0 && Number.isFinite(v),
        "a number > 0",
        fallback,
      ),
    string: (name: string, fallback?: string) =>
      get(name, (v) => typeof v === "string", "a string", fallback),
    boolean: (name: string, fallback?: boolean) =>
      get(name, (v) => typeof v === "boolean", "true or false", fallback),
    intList: (name: string, fallback?: number[]) =>
      get(
        name,
        (v) => Array.isArray(v) && v.every(Number.isInteger),
        "a list of integers",
        fallback,
      ),
  };
}
