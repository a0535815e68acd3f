/**
 * @module The `moe.json` manifest that describes a Switchyard model directory.
 *
 * A model directory holds this manifest and ONNX files: one gate per layer
 * (`[n, d_model] → [n, experts]` logits) and one file per routed or shared expert
 * (`[n, d_model] → [n, d_model]`, dynamic `n`). Each layer computes
 * `h ← h + Σ_k w_k · expert_k(h) + Σ_s shared_s(h)`; with a `norm` block every one of
 * those files applies the layer's pre-MoE norm to its input first, so the layer is
 * `h + MoE(norm(h))`. The `router` block says how logits become `(experts, weights)`
 * (see `gpu-backend/moe/routing.ts`).
 */
import { z } from "zod";

/** Input tensor name of every ONNX file in a model. */
export const ONNX_INPUT_NAME = "x";
/** Output tensor name of every ONNX file in a model. */
export const ONNX_OUTPUT_NAME = "y";

/** Expert activation functions (`gelu` is the erf form, `gelu_tanh` the tanh approximation). */
export const ACTIVATIONS = ["silu", "gelu", "gelu_tanh", "relu"] as const;
/** Expert graph kinds: `act(x·w1 + b1)·w2 + b2`, or `down(act(gate(x)) · up(x))`. */
export const EXPERT_KINDS = ["mlp", "swiglu"] as const;

/**
 * Routing family of the gate (defaults = softmax top-k, renormalised, group score `max`):
 * DeepSeek-V3 is `sigmoid` + `sum_top2` + `e_score_correction_bias`, Qwen2-MoE and OLMoE
 * are `softmax` with `norm_topk_prob: false`, and so on (docs/MODEL_FORMAT.md).
 */
export const RouterSchema = z.object({
  /** How logits become scores: softmax over all experts, or a sigmoid per expert. */
  scoring: z.enum(["softmax", "sigmoid"]).default("softmax"),
  /** Score of an expert group for the group limit: its best score, or its best two summed. */
  group_score: z.enum(["max", "sum_top2"]).default("max"),
  /** Renormalise the selected experts' scores to sum to 1 before scaling. */
  norm_topk_prob: z.boolean().default(true),
  /** Factor on the routed experts' weights. */
  routed_scaling_factor: z.number().positive().max(1e6).default(1),
  /** Selection-only bias added to the scores, `[layers][experts]` (DeepSeek-V3). */
  e_score_correction_bias: z.array(z.array(z.number().finite())).optional(),
});

/** A parsed router block. */
export type RouterSettings = z.infer<typeof RouterSchema>;

/** Schema of `moe.json`. */
export const ModelManifestSchema = z.object({
  name: z.string().regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    "must be 1–64 characters [A-Za-z0-9._-]",
  ),
  version: z.string().default("1"),
  d_model: z.int().positive(),
  d_ff: z.int().positive(),
  layers: z.int().positive(),
  experts: z.int().min(2),
  top_k: z.int().positive(),
  /** Expert groups for group-limited top-k (DeepSeek-V3 style); 1 disables it. */
  groups: z.int().positive().default(1),
  /** Groups kept per token before the top-k; defaults to all groups. */
  topk_group: z.int().positive().optional(),
  shared_experts: z.int().min(0).default(0),
  /** Activation inside the experts (informational: it is baked into the ONNX graphs). */
  activation: z.enum(ACTIVATIONS).default("silu"),
  /** Expert graph kind (informational for serving; the reference forward pass reads it). */
  expert_kind: z.enum(EXPERT_KINDS).default("mlp"),
  /** Inner width of the shared experts when it differs from `d_ff` (informational). */
  shared_d_ff: z.int().positive().optional(),
  /** Element type of every input and output. */
  dtype: z.literal("float32").default("float32"),
  /** How the ONNX files store their weights (float16 weights are cast to float32 in-graph). */
  weight_dtype: z.enum(["float32", "float16"]).default("float32"),
  /**
   * The layer's pre-MoE norm (e.g. a checkpoint's `post_attention_layernorm`), applied by
   * every part file to its input: the layer computes `h + MoE(norm(h))`. Absent: none.
   */
  norm: z.object({ kind: z.literal("rmsnorm"), epsilon: z.number().positive() }).optional(),
  router: RouterSchema.prefault({}),
  /** Where an imported model came from (family, checkpoint layers, what was left out). */
  source: z.record(z.string(), z.unknown()).optional(),
  /** Request types the demo generator gave distinct expert preferences (informational). */
  request_types: z.array(z.string()).default([]),
  /** File paths relative to the model directory, `{layer}`, `{expert}` substituted. */
  files: z.object({
    gate: z.string().default("layer{layer}/gate.onnx"),
    expert: z.string().default("layer{layer}/expert{expert}.onnx"),
    shared: z.string().default("layer{layer}/shared{expert}.onnx"),
  }).prefault({}),
}).superRefine((m, ctx) => {
  if (m.top_k > m.experts) {
    ctx.addIssue({ code: "custom", path: ["top_k"], message: `must be <= experts (${m.experts})` });
  }
  if (m.experts % m.groups !== 0) {
    ctx.addIssue({
      code: "custom",
      path: ["groups"],
      message: `must divide experts (${m.experts})`,
    });
  }
  const topkGroup = m.topk_group ?? m.groups;
  if (topkGroup > m.groups) {
    ctx.addIssue({
      code: "custom",
      path: ["topk_group"],
      message: `must be <= groups (${m.groups})`,
    });
  }
  if (topkGroup * (m.experts / m.groups) < m.top_k) {
    ctx.addIssue({
      code: "custom",
      path: ["topk_group"],
      message: "selected groups must hold at least top_k experts",
    });
  }
  if (m.groups > 1 && m.router.group_score === "sum_top2" && m.experts / m.groups < 2) {
    ctx.addIssue({
      code: "custom",
      path: ["router", "group_score"],
      message: "sum_top2 needs at least 2 experts per group",
    });
  }
  const bias = m.router.e_score_correction_bias;
  if (
    bias !== undefined && (bias.length !== m.layers || bias.some((row) => row.length !== m.experts))
  ) {
    ctx.addIssue({
      code: "custom",
      path: ["router", "e_score_correction_bias"],
      message: `must be [layers (${m.layers})][experts (${m.experts})]`,
    });
  }
});

/** A parsed, defaults-applied manifest. */
export type ModelManifest = z.infer<typeof ModelManifestSchema>;

/** Which ONNX file of a model: the gate of a layer, a routed expert, or a shared expert. */
export type ModelPart =
  | { kind: "gate"; layer: number }
  | { kind: "expert"; layer: number; expert: number }
  | { kind: "shared"; layer: number; expert: number };

/** Relative path of one ONNX file of the model. */
export function modelPartPath(manifest: ModelManifest, part: ModelPart): string {
  const template = manifest.files[part.kind];
  return template
    .replaceAll("{layer}", String(part.layer))
    .replaceAll("{expert}", part.kind === "gate" ? "" : String(part.expert));
}

/** Stable string key of a model part, e.g. `L0/E12`, `L1/gate`, `L0/S0`. */
export function modelPartKey(part: ModelPart): string {
  if (part.kind === "gate") return `L${part.layer}/gate`;
  return `L${part.layer}/${part.kind === "expert" ? "E" : "S"}${part.expert}`;
}

const PART_KEY = /^L(\d+)\/(?:(gate)|([ES])(\d+))$/;

/** The part a key such as `L0/E12`, `L1/S0` or `L0/gate` names; `undefined` if malformed. */
export function parsePartKey(key: string): ModelPart | undefined {
  const match = PART_KEY.exec(key);
  if (match === null) return undefined;
  const layer = Number(match[1]);
  if (match[2] !== undefined) return { kind: "gate", layer };
  const expert = Number(match[4]);
  return match[3] === "E" ? { kind: "expert", layer, expert } : { kind: "shared", layer, expert };
}

/** Every ONNX part of a model, gates first. */
export function listModelParts(manifest: ModelManifest): ModelPart[] {
  const parts: ModelPart[] = [];
  for (let layer = 0; layer < manifest.layers; layer++) {
    parts.push({ kind: "gate", layer });
    for (let expert = 0; expert < manifest.experts; expert++) {
      parts.push({ kind: "expert", layer, expert });
    }
    for (let expert = 0; expert < manifest.shared_experts; expert++) {
      parts.push({ kind: "shared", layer, expert });
    }
  }
  return parts;
}

/**
 * Weight bytes of one routed expert of width `dModel` and hidden size `dFf`: an MLP holds
 * `w1 [d_model, d_ff]`, `b1 [d_ff]`, `w2 [d_ff, d_model]`, `b2 [d_model]`; a SwiGLU expert
 * `w_gate`, `w_up [d_model, d_ff]` and `w_down [d_ff, d_model]`. Residency budgets and
 * the advisor's cost of moving replicas.
 */
export function expertWeightBytes(
  dModel: number,
  dFf: number,
  kind: (typeof EXPERT_KINDS)[number] = "mlp",
  bytesPerWeight = 4,
): number {
  const weights = kind === "swiglu" ? 3 * dModel * dFf : 2 * dModel * dFf + dFf + dModel;
  return bytesPerWeight * weights;
}
