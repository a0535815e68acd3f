/**
 * @module Turns a Hugging Face checkpoint's MoE layers into a Switchyard model directory.
 *
 * Step 1: read `config.json` into a family plan (`families.ts`): MoE layers, router block.
 * Step 2: per MoE layer, read the pre-MoE RMSNorm, the router and every expert (one tensor
 *         at a time, widened to float32), transpose PyTorch's `[out, in]` to `[in, out]`,
 *         and write the gate, routed-expert and shared-expert ONNX files — each applying
 *         the norm first, so the served layer computes `h + MoE(norm(h))` as the
 *         checkpoint's decoder layer does around its MoE block.
 * Step 3: write `moe.json` last (a half-written directory has none) and report what was
 *         imported and what was left out (dense layers, attention, embeddings, …).
 */
import { dirname, join } from "node:path";
import {
  type ModelManifest,
  ModelManifestSchema,
  modelPartPath,
} from "../../shared/model_manifest.ts";
import { MANIFEST_FILE } from "../model/generate.ts";
import { buildExpertModel, buildGateModel, type GraphOptions } from "../model/onnx_graphs.ts";
import type { NormWeights, SwigluExpertWeights } from "../model/weights.ts";
import { type Checkpoint, openCheckpoint } from "./checkpoint.ts";
import { type ExpertNames, type FamilyPlan, planFamily } from "./families.ts";

/** Options of {@linkcode importCheckpoint}. */
export interface ImportOptions {
  /** Checkpoint directory. */
  from: string;
  /** Model directory to write. */
  out: string;
  /** Model name (default: the checkpoint directory's name, sanitised). */
  name?: string;
  /** Keep float16 weights as float16 (only for float16 checkpoints). */
  keepFp16?: boolean;
}

/** What was imported. */
export interface ImportReport {
  manifest: ModelManifest;
  plan: FamilyPlan;
  denseLayers: number[];
  /** Checkpoint tensors not imported, as name patterns (`*` for indices) with counts. */
  leftOut: { pattern: string; count: number }[];
  /** Source dtypes of the imported tensors, and the stored weight dtype. */
  sourceDtypes: string[];
  weightDtypeNote: string;
  files: number;
  bytes: number;
}

/** Imports `options.from` into `options.out`; see the module doc. */
export async function importCheckpoint(options: ImportOptions): Promise<ImportReport> {
  const checkpoint = await openCheckpoint(options.from);
  try {
    // Step 1: the plan and the manifest, validated before anything is written.
    const plan = planFamily(checkpoint.config);
    if (plan.moeLayers.length === 0) {
      throw new RangeError("Cannot import: the checkpoint has no MoE layer");
    }
    const used = new Set<string>();
    const matrices = plan.moeLayers.flatMap((layer) => layerTensorNames(plan, layer));
    const sourceDtypes = [...new Set(matrices.map((name) => checkpoint.entry(name)?.dtype ?? "?"))]
      .sort();
    const half = options.keepFp16 === true && sourceDtypes.every((dtype) => dtype === "F16");
    const weightDtypeNote = half
      ? "F16 kept as float16 (cast to float32 in-graph)"
      : `${sourceDtypes.join(", ")} → float32` +
        (options.keepFp16 ? " (--keep-fp16 applies to F16 checkpoints only)" : "");
    const biases = plan.correctionBias
      ? await Promise.all(plan.moeLayers.map(async (layer) => {
        const name = plan.names.bias(layer);
        used.add(name);
        return Array.from((await checkpoint.read(name, [plan.experts])).data);
      }))
      : undefined;
    const manifest = manifestOf(plan, options, half, biases);
    // Step 2: the ONNX files, layer by layer, one expert at a time.
    await Deno.mkdir(options.out, { recursive: true });
    await Deno.remove(join(options.out, MANIFEST_FILE)).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    const graph: GraphOptions = { weightDtype: manifest.weight_dtype };
    let files = 0;
    let bytes = 0;
    const write = async (path: string, data: Uint8Array) => {
      const full = join(options.out, path);
      await Deno.mkdir(dirname(full), { recursive: true });
      await Deno.writeFile(full, data);
      files++;
      bytes += data.length;
    };
    const reader = tensorReader(checkpoint, used);
    for (const [layer, source] of plan.moeLayers.entries()) {
      const norm: NormWeights = {
        weight: await reader(plan.names.norm(source), [plan.hidden]),
        epsilon: plan.epsilon,
      };
      const gate = await reader(plan.names.gate(source), [plan.experts, plan.hidden]);
      await write(
        modelPartPath(manifest, { kind: "gate", layer }),
        buildGateModel({
          dModel: plan.hidden,
          experts: plan.experts,
          weight: transpose(gate, plan.experts, plan.hidden),
          norm,
        }, graph),
      );
      for (let expert = 0; expert < plan.experts; expert++) {
        const weights = await swiglu(
          reader,
          plan.names.expert(source, expert),
          plan.hidden,
          plan.expertFf,
        );
        await write(
          modelPartPath(manifest, { kind: "expert", layer, expert }),
          buildExpertModel({ ...weights, norm }, plan.activation, graph),
        );
      }
      if (plan.sharedFf > 0) {
        const weights = await swiglu(reader, plan.names.shared(source), plan.hidden, plan.sharedFf);
        const outputGate = plan.sharedGate
          ? await reader(plan.names.sharedGate(source), [1, plan.hidden])
          : undefined;
        await write(
          modelPartPath(manifest, { kind: "shared", layer, expert: 0 }),
          buildExpertModel({ ...weights, norm, outputGate }, plan.activation, graph),
        );
      }
    }
    // Step 3: the manifest, and what was left out.
    await Deno.writeTextFile(
      join(options.out, MANIFEST_FILE),
      JSON.stringify(manifest, null, 2) + "\n",
    );
    const denseLayers = Array.from({ length: plan.decoderLayers }, (_, i) => i)
      .filter((i) => !plan.moeLayers.includes(i));
    return {
      manifest,
      plan,
      denseLayers,
      leftOut: leftOutPatterns(checkpoint.names().filter((name) => !used.has(name))),
      sourceDtypes,
      weightDtypeNote,
      files,
      bytes,
    };
  } finally {
    checkpoint.close();
  }
}

type Reader = (name: string, shape: number[]) => Promise<Float32Array>;

/** Reads tensors as float32 with their expected shapes, remembering which were used. */
function tensorReader(checkpoint: Checkpoint, used: Set<string>): Reader {
  return async (name, shape) => {
    used.add(name);
    return (await checkpoint.read(name, shape)).data;
  };
}

function layerTensorNames(plan: FamilyPlan, layer: number): string[] {
  const experts = Array.from({ length: plan.experts }, (_, j) => plan.names.expert(layer, j));
  if (plan.sharedFf > 0) experts.push(plan.names.shared(layer));
  return [plan.names.gate(layer), ...experts.flatMap((e) => [e.gate, e.up, e.down])];
}

/** One SwiGLU expert from its PyTorch projections `gate/up [ff, d]`, `down [d, ff]`. */
async function swiglu(
  read: Reader,
  names: ExpertNames,
  hidden: number,
  ff: number,
): Promise<SwigluExpertWeights> {
  return {
    kind: "swiglu",
    dModel: hidden,
    dFf: ff,
    wGate: transpose(await read(names.gate, [ff, hidden]), ff, hidden),
    wUp: transpose(await read(names.up, [ff, hidden]), ff, hidden),
    wDown: transpose(await read(names.down, [hidden, ff]), hidden, ff),
  };
}

/** `[rows, cols]` → `[cols, rows]`. */
export function transpose(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c]!;
  }
  return out;
}

function manifestOf(
  plan: FamilyPlan,
  options: ImportOptions,
  half: boolean,
  biases: number[][] | undefined,
): ModelManifest {
  const fallback = options.from.replace(/\/+$/, "").split("/").pop()!.replace(
    /[^A-Za-z0-9._-]/g,
    "-",
  );
  const name = options.name ??
    (/^[A-Za-z0-9]/.test(fallback) ? fallback.slice(0, 64) : `m-${fallback}`.slice(0, 64));
  const parsed = ModelManifestSchema.safeParse({
    name,
    d_model: plan.hidden,
    d_ff: plan.expertFf,
    layers: plan.moeLayers.length,
    experts: plan.experts,
    top_k: plan.topK,
    groups: plan.groups,
    topk_group: plan.topkGroup,
    shared_experts: plan.sharedFf > 0 ? 1 : 0,
    ...(plan.sharedFf > 0 ? { shared_d_ff: plan.sharedFf } : {}),
    activation: plan.activation,
    expert_kind: "swiglu",
    weight_dtype: half ? "float16" : "float32",
    norm: { kind: "rmsnorm", epsilon: plan.epsilon },
    router: { ...plan.router, ...(biases ? { e_score_correction_bias: biases } : {}) },
    source: {
      format: "huggingface-safetensors",
      model_type: plan.modelType,
      checkpoint_layers: plan.moeLayers,
      note: "MoE blocks only: each served layer is h + MoE(post_attention_layernorm(h)); " +
        "attention, dense MLP layers, embeddings, the final norm and the LM head are not imported",
    },
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RangeError(`Cannot import: manifest ${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data;
}

/** Names with layer/expert indices replaced by `*`, counted. */
function leftOutPatterns(names: string[]): { pattern: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const name of names) {
    const pattern = name.replace(/\.\d+\./g, ".*.");
    counts.set(pattern, (counts.get(pattern) ?? 0) + 1);
  }
  return [...counts].map(([pattern, count]) => ({ pattern, count }));
}
