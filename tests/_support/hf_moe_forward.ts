/**
 * @module Test support: an independent float64 forward pass of a synthetic checkpoint's
 * MoE blocks, written from the families' PyTorch code (transformers' sparse MoE blocks),
 * straight from the checkpoint tensors and `config.json` — sharing nothing with the
 * importer, the backend's routing or the reference forward pass. Per MoE decoder layer:
 * `h ← h + MoE(post_attention_layernorm(h))`; attention and dense layers are not applied.
 */
import type { SyntheticCheckpoint } from "../../tools/import/synthetic_checkpoint.ts";

/** `[rows, hidden]` hidden states after every MoE block, and the chosen experts per layer. */
export function hfMoeForward(
  checkpoint: SyntheticCheckpoint,
  tokens: Float32Array,
  rows: number,
): { output: Float64Array; experts: number[][][] } {
  const c = checkpoint.config;
  const t = (name: string) => {
    const tensor = checkpoint.tensors.get(name);
    if (tensor === undefined) throw new Error(`synthetic checkpoint has no ${name}`);
    return tensor.data;
  };
  const hidden = c["hidden_size"] as number;
  const family = checkpoint.family;
  const moeLayers = [
    ...new Set(
      [...checkpoint.tensors.keys()]
        .filter((n) => /\.(mlp|block_sparse_moe)\.gate\.weight$/.test(n))
        .map((n) => Number(n.split(".")[2])),
    ),
  ].sort((a, b) => a - b);
  const h = Float64Array.from(tokens);
  const chosen: number[][][] = [];
  for (const layer of moeLayers) {
    const p = `model.layers.${layer}.`;
    const moe = family === "mixtral" ? `${p}block_sparse_moe.` : `${p}mlp.`;
    const perRow: number[][] = [];
    for (let r = 0; r < rows; r++) {
      const x = h.slice(r * hidden, (r + 1) * hidden);
      // RMSNorm: x * rsqrt(mean(x^2) + eps) * weight
      const rms = 1 /
        Math.sqrt(x.reduce((s, v) => s + v * v, 0) / hidden + (c["rms_norm_eps"] as number));
      const w = t(`${p}post_attention_layernorm.weight`);
      const xn = x.map((v, i) => v * rms * w[i]!);
      const logits = linear(t(`${moe}gate.weight`), xn);
      const { idx, weight } = route(
        family,
        c,
        logits,
        family === "deepseek_v3" ? t(`${moe}gate.e_score_correction_bias`) : undefined,
      );
      perRow.push([...idx].sort((a, b) => a - b));
      const out = new Float64Array(hidden);
      idx.forEach((e, k) => {
        const names = family === "mixtral"
          ? ["w1", "w3", "w2"]
          : ["gate_proj", "up_proj", "down_proj"];
        const y = swiglu(t, `${moe}experts.${e}.`, names, xn);
        y.forEach((v, i) => out[i]! += weight[k]! * v);
      });
      if (family === "qwen2_moe") {
        const y = swiglu(t, `${moe}shared_expert.`, ["gate_proj", "up_proj", "down_proj"], xn);
        const g = 1 / (1 + Math.exp(-linear(t(`${moe}shared_expert_gate.weight`), xn)[0]!));
        y.forEach((v, i) => out[i]! += g * v);
      }
      if (family === "deepseek_v2" || family === "deepseek_v3") {
        const y = swiglu(t, `${moe}shared_experts.`, ["gate_proj", "up_proj", "down_proj"], xn);
        y.forEach((v, i) => out[i]! += v);
      }
      for (let i = 0; i < hidden; i++) h[r * hidden + i]! += out[i]!;
    }
    chosen.push(perRow);
  }
  return { output: h, experts: chosen };
}

/** transformers' routing of each family, one token. */
function route(
  family: string,
  c: Record<string, unknown>,
  logits: number[],
  bias: Float32Array | undefined,
): { idx: number[]; weight: number[] } {
  const k = c["num_experts_per_tok"] as number;
  if (family === "deepseek_v3") {
    const s = logits.map((v) => 1 / (1 + Math.exp(-v)));
    const forChoice = s.map((v, e) => v + bias![e]!);
    const groups = c["n_group"] as number;
    const size = s.length / groups;
    const groupScores = Array.from({ length: groups }, (_, g) => {
      const top = forChoice.slice(g * size, (g + 1) * size).sort((a, b) => b - a);
      return top[0]! + top[1]!;
    });
    const kept = topk(groupScores, c["topk_group"] as number);
    const masked = forChoice.map((v, e) => kept.includes(Math.floor(e / size)) ? v : 0.0);
    const idx = topk(masked, k);
    let weight = idx.map((e) => s[e]!);
    if (c["norm_topk_prob"]) {
      const sum = weight.reduce((a, b) => a + b, 0) + 1e-20;
      weight = weight.map((w) => w / sum);
    }
    return { idx, weight: weight.map((w) => w * (c["routed_scaling_factor"] as number)) };
  }
  const max = Math.max(...logits);
  const exps = logits.map((v) => Math.exp(v - max));
  const total = exps.reduce((a, b) => a + b, 0);
  const p = exps.map((v) => v / total);
  if (family === "deepseek_v2") {
    let scores = p;
    if (c["topk_method"] === "group_limited_greedy") {
      const groups = c["n_group"] as number;
      const size = p.length / groups;
      const groupMax = Array.from(
        { length: groups },
        (_, g) => Math.max(...p.slice(g * size, (g + 1) * size)),
      );
      const kept = topk(groupMax, c["topk_group"] as number);
      scores = p.map((v, e) => kept.includes(Math.floor(e / size)) ? v : 0.0);
    }
    const idx = topk(scores, k);
    return { idx, weight: idx.map((e) => scores[e]! * (c["routed_scaling_factor"] as number)) };
  }
  const idx = topk(p, k);
  let weight = idx.map((e) => p[e]!);
  if (family === "mixtral" || c["norm_topk_prob"]) {
    const sum = weight.reduce((a, b) => a + b, 0);
    weight = weight.map((w) => w / sum);
  }
  return { idx, weight };
}

/** Indices of the k largest values. */
function topk(values: number[], k: number): number[] {
  return values.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0]).slice(0, k).map((
    [, i],
  ) => i);
}

/** `W x` for a PyTorch `Linear.weight` `W [out, in]`. */
function linear(weight: Float32Array, x: ArrayLike<number>): number[] {
  const inputs = x.length;
  return Array.from({ length: weight.length / inputs }, (_, o) => {
    let sum = 0;
    for (let i = 0; i < inputs; i++) sum += weight[o * inputs + i]! * x[i]!;
    return sum;
  });
}

/** `down(silu(gate x) * up x)` with the projections' names. */
function swiglu(
  t: (name: string) => Float32Array,
  base: string,
  names: string[],
  x: ArrayLike<number>,
) {
  const gate = linear(t(`${base}${names[0]}.weight`), x);
  const up = linear(t(`${base}${names[1]}.weight`), x);
  return linear(
    t(`${base}${names[2]}.weight`),
    gate.map((g, i) => g / (1 + Math.exp(-g)) * up[i]!),
  );
}
