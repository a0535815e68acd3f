/**
 * @module Tiny synthetic Hugging Face checkpoints in each family's exact tensor naming and
 * `config.json` keys, for the importer's tests and demonstrations: random weights (seeded),
 * attention, embedding and dense-layer tensors included so the importer must leave them
 * out, written as safetensors in F32, F16 or BF16, optionally sharded with an index.
 *
 * `deno run -A tools/import/synthetic_checkpoint.ts --family deepseek_v3 --out DIR`
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createGaussian, createRandom, deriveSeed } from "../model/prng.ts";
import { FAMILIES } from "./families.ts";
import { INDEX_FILE } from "./checkpoint.ts";

/** One tensor: PyTorch layout, values as stored (already rounded to `dtype`). */
export interface SyntheticTensor {
  dtype: "F32" | "F16" | "BF16";
  shape: number[];
  data: Float32Array;
}

/** A checkpoint in memory. */
export interface SyntheticCheckpoint {
  family: (typeof FAMILIES)[number];
  config: Record<string, unknown>;
  tensors: Map<string, SyntheticTensor>;
}

const HIDDEN = 16;
const FF = 12;
const EXPERTS = 8;

/** Per family: its tiny config and the dtype of its weights. */
const CONFIGS: Record<
  SyntheticCheckpoint["family"],
  { dtype: SyntheticTensor["dtype"]; config: Record<string, unknown> }
> = {
  mixtral: {
    dtype: "BF16",
    config: {
      num_hidden_layers: 2,
      num_local_experts: EXPERTS,
      num_experts_per_tok: 2,
      intermediate_size: FF,
    },
  },
  qwen2_moe: {
    dtype: "BF16",
    config: {
      num_hidden_layers: 3,
      num_experts: EXPERTS,
      num_experts_per_tok: 2,
      moe_intermediate_size: FF,
      shared_expert_intermediate_size: 20,
      intermediate_size: 24,
      norm_topk_prob: false,
      decoder_sparse_step: 1,
      mlp_only_layers: [0],
    },
  },
  qwen3_moe: {
    dtype: "F16",
    config: {
      num_hidden_layers: 4,
      num_experts: EXPERTS,
      num_experts_per_tok: 3,
      moe_intermediate_size: FF,
      intermediate_size: 24,
      norm_topk_prob: true,
      decoder_sparse_step: 2,
      mlp_only_layers: [],
    },
  },
  olmoe: {
    dtype: "F32",
    config: {
      num_hidden_layers: 2,
      num_experts: EXPERTS,
      num_experts_per_tok: 2,
      intermediate_size: FF,
      norm_topk_prob: false,
    },
  },
  deepseek_v2: {
    dtype: "BF16",
    config: {
      num_hidden_layers: 3,
      n_routed_experts: EXPERTS,
      n_shared_experts: 2,
      num_experts_per_tok: 2,
      moe_intermediate_size: FF,
      intermediate_size: 24,
      first_k_dense_replace: 1,
      moe_layer_freq: 1,
      topk_method: "group_limited_greedy",
      n_group: 4,
      topk_group: 2,
      norm_topk_prob: false,
      routed_scaling_factor: 4.0,
      scoring_func: "softmax",
    },
  },
  deepseek_v3: {
    dtype: "BF16",
    config: {
      num_hidden_layers: 3,
      n_routed_experts: EXPERTS,
      n_shared_experts: 1,
      num_experts_per_tok: 3,
      moe_intermediate_size: FF,
      intermediate_size: 24,
      first_k_dense_replace: 1,
      moe_layer_freq: 1,
      topk_method: "noaux_tc",
      n_group: 4,
      topk_group: 2,
      norm_topk_prob: true,
      routed_scaling_factor: 2.5,
      scoring_func: "sigmoid",
    },
  },
};

/** A tiny checkpoint of `family` (seeded; same seed, same values). */
export function syntheticCheckpoint(
  family: SyntheticCheckpoint["family"],
  seed = 1,
): SyntheticCheckpoint {
  const { dtype, config: own } = CONFIGS[family];
  const config = {
    model_type: family,
    hidden_size: HIDDEN,
    hidden_act: "silu",
    rms_norm_eps: 1e-6,
    vocab_size: 32,
    num_attention_heads: 2,
    ...own,
  };
  const tensors = new Map<string, SyntheticTensor>();
  let stream = 0;
  const add = (name: string, shape: number[], scale: number, offset = 0, type = dtype) => {
    const gaussian = createGaussian(createRandom(deriveSeed(seed, ++stream)));
    const values = Float32Array.from(
      { length: shape.reduce((a, b) => a * b, 1) },
      () => offset + scale * gaussian(),
    );
    tensors.set(name, { dtype: type, shape, data: roundTo(values, type) });
  };
  const linear = (name: string, out: number, inputs: number) =>
    add(name, [out, inputs], 1 / Math.sqrt(inputs));
  const mlp = (base: string, ff: number, names = ["gate_proj", "up_proj", "down_proj"]) => {
    linear(`${base}.${names[0]}.weight`, ff, HIDDEN);
    linear(`${base}.${names[1]}.weight`, ff, HIDDEN);
    linear(`${base}.${names[2]}.weight`, HIDDEN, ff);
  };
  add("model.embed_tokens.weight", [32, HIDDEN], 1);
  const layers = own["num_hidden_layers"] as number;
  for (let i = 0; i < layers; i++) {
    const p = `model.layers.${i}.`;
    add(`${p}input_layernorm.weight`, [HIDDEN], 0.1, 1);
    add(`${p}post_attention_layernorm.weight`, [HIDDEN], 0.1, 1);
    for (const proj of ["q_proj", "k_proj", "v_proj", "o_proj"]) {
      linear(`${p}self_attn.${proj}.weight`, HIDDEN, HIDDEN);
    }
    const dense = isDense(family, own, i);
    if (dense) {
      mlp(`${p}mlp`, own["intermediate_size"] as number);
      continue;
    }
    if (family === "mixtral") {
      add(`${p}block_sparse_moe.gate.weight`, [EXPERTS, HIDDEN], 0.5);
      for (let j = 0; j < EXPERTS; j++) {
        mlp(`${p}block_sparse_moe.experts.${j}`, FF, ["w1", "w3", "w2"]);
      }
      continue;
    }
    add(`${p}mlp.gate.weight`, [EXPERTS, HIDDEN], 0.5);
    for (let j = 0; j < EXPERTS; j++) mlp(`${p}mlp.experts.${j}`, FF);
    if (family === "qwen2_moe") {
      mlp(`${p}mlp.shared_expert`, own["shared_expert_intermediate_size"] as number);
      add(`${p}mlp.shared_expert_gate.weight`, [1, HIDDEN], 0.5);
    }
    if (family === "deepseek_v2" || family === "deepseek_v3") {
      mlp(`${p}mlp.shared_experts`, FF * (own["n_shared_experts"] as number));
    }
    if (family === "deepseek_v3") {
      add(`${p}mlp.gate.e_score_correction_bias`, [EXPERTS], 0.1, 0, "F32");
    }
  }
  add("model.norm.weight", [HIDDEN], 0.1, 1);
  add("lm_head.weight", [32, HIDDEN], 0.25);
  return { family, config, tensors };
}

function isDense(family: string, config: Record<string, unknown>, layer: number): boolean {
  if (family === "qwen2_moe" || family === "qwen3_moe") {
    return (config["mlp_only_layers"] as number[]).includes(layer) ||
      (layer + 1) % (config["decoder_sparse_step"] as number) !== 0;
  }
  if (family === "deepseek_v2" || family === "deepseek_v3") {
    return layer < (config["first_k_dense_replace"] as number);
  }
  return false;
}

/** Values as `dtype` stores them (BF16 rounds to nearest even, F16 likewise). */
export function roundTo(values: Float32Array, dtype: SyntheticTensor["dtype"]): Float32Array {
  if (dtype === "F32") return values;
  if (dtype === "F16") return Float32Array.from(Float16Array.from(values));
  const out = Float32Array.from(values);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i]!;
    bits[i] = ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) << 16;
  }
  return out;
}

/** Writes `checkpoint` into `dir`: `config.json` and one file, or `shards` files plus an index. */
export async function writeCheckpoint(
  dir: string,
  checkpoint: SyntheticCheckpoint,
  shards = 1,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "config.json"), JSON.stringify(checkpoint.config, null, 2));
  const names = [...checkpoint.tensors.keys()];
  const fileOf = (i: number) =>
    shards === 1
      ? "model.safetensors"
      : `model-${String(i + 1).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}.safetensors`;
  const weightMap: Record<string, string> = {};
  for (let shard = 0; shard < shards; shard++) {
    const mine = names.filter((_, i) => i % shards === shard);
    for (const name of mine) weightMap[name] = fileOf(shard);
    await Deno.writeFile(
      join(dir, fileOf(shard)),
      encodeSafetensors(mine.map((name) => [name, checkpoint.tensors.get(name)!])),
    );
  }
  if (shards > 1) {
    await Deno.writeTextFile(
      join(dir, INDEX_FILE),
      JSON.stringify({ metadata: {}, weight_map: weightMap }, null, 2),
    );
  }
}

/** Safetensors bytes of the given tensors (header padded with spaces to 8 bytes). */
export function encodeSafetensors(tensors: [string, SyntheticTensor][]): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  const blobs: Uint8Array[] = [];
  let offset = 0;
  for (const [name, tensor] of tensors) {
    const bytes = tensorBytes(tensor);
    header[name] = {
      dtype: tensor.dtype,
      shape: tensor.shape,
      data_offsets: [offset, offset + bytes.length],
    };
    blobs.push(bytes);
    offset += bytes.length;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (json.length % 8)) % 8);
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  let at = 8 + head.length;
  for (const blob of blobs) {
    out.set(blob, at);
    at += blob.length;
  }
  return out;
}

function tensorBytes(tensor: SyntheticTensor): Uint8Array {
  if (tensor.dtype === "F32") return new Uint8Array(tensor.data.slice().buffer);
  if (tensor.dtype === "F16") return new Uint8Array(Float16Array.from(tensor.data).buffer);
  const halves = new Uint16Array(tensor.data.length);
  const bits = new Uint32Array(tensor.data.slice().buffer);
  for (let i = 0; i < bits.length; i++) halves[i] = bits[i]! >>> 16; // already BF16-exact
  return new Uint8Array(halves.buffer);
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      family: { type: "string" },
      out: { type: "string" },
      shards: { type: "string", default: "1" },
    },
  });
  const family = values.family as SyntheticCheckpoint["family"];
  if (!FAMILIES.includes(family) || values.out === undefined) {
    throw new RangeError(
      `Cannot write a checkpoint: need --family (${FAMILIES.join(", ")}) and --out`,
    );
  }
  await writeCheckpoint(values.out, syntheticCheckpoint(family), Number(values.shards));
}
