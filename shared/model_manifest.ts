/**
 * @module The `moe.json` manifest that describes a Switchyard model directory.
 *
 * A model directory holds this manifest and ONNX files: one gate per layer
 * (`[n, d_model] → [n, experts]` logits) and one file per routed or shared expert
 * (`[n, d_model] → [n, d_model]`, dynamic `n`). Each layer computes
 * `h ← h + Σ_k w_k · expert_k(h) + Σ_s shared_s(h)`.
 */
import { z } from "zod";

/** Input tensor name of every ONNX file in a model. */
export const ONNX_INPUT_NAME = "x";
/** Output tensor name of every ONNX file in a model. */
export const ONNX_OUTPUT_NAME = "y";

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
  activation: z.enum(["silu", "relu"]).default("silu"),
  dtype: z.literal("float32").default("float32"),
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
 * Float32 weight bytes of one routed expert of width `dModel` and hidden size `dFf`:
 * `w1 [d_model, d_ff]`, `b1 [d_ff]`, `w2 [d_ff, d_model]`, `b2 [d_model]` — the expert MLP
 * of this model format. Residency budgets and the advisor's cost of moving replicas.
 */
export function expertWeightBytes(dModel: number, dFf: number): number {
  return 4 * (2 * dModel * dFf + dFf + dModel);
}
