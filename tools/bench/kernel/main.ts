// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:kernel`: onnxruntime alone, on this machine, at the row
 * counts a wave gives each expert — what the compute limit of `bench:baseline` assumes
 * (batch 256) against what serving actually feeds the kernels (a few rows per expert).
 *
 *   Step 1: the limit (`compute_limit.ts`, the same as `bench:baseline`).
 *   Step 2: per rows-per-expert `r`: (a) one expert MLP (the model's own ONNX file) on `r`
 *           rows; (b) the whole forward on layer executables — layer 0's gate, then every
 *           layer's composed executable hosting all experts (next gate fused), on a wave
 *           where every expert gets exactly `r` rows (`kernel/uniform_wave.ts`), in the
 *           split layout the backend runs and in the stacked layout
 *           (`tools/bench/kernel/stack_experts.ts`). Single-thread sessions as the backend
 *           creates them; CPU time of this process from `/proc/self/stat`; no JavaScript
 *           work inside the timed loop beyond `session.run()`.
 *   Step 3: both layouts on Zipf-skewed waves at the demo mix's mean fill
 *           (`kernel/skewed_wave.ts`): padding to the fullest expert costs more when skewed.
 *   Step 4: `--profile`: layer 0's run split by onnxruntime's profiler into MatMul/Gemm
 *           kernels, other kernels and time between kernels (`kernel/ort_profile.ts`).
 *   Also: the weight-streaming bound — bytes of weights one forward reads ÷ a measured
 *   single-thread streaming read (`kernel/memory_bandwidth.ts`).
 *
 * Reported: GFLOP/s and tokens per CPU-second, and both as % of the limit — the most a
 * serving path can reach when its waves hold `r` rows per expert.
 */
import { join } from "node:path";
import ort from "onnxruntime-node";
import { computeLimit, flopsPerRow } from "../compute_limit.ts";
import { benchModel } from "../baseline/bench_model.ts";
import { processCpuMs } from "../cpu_time.ts";
import { formatTable, round } from "../stats.ts";
import { DEMO_MODEL_OPTION, parseCli } from "../../cli/cli_args.ts";
import { modelPartPath } from "../../../shared/model_manifest.ts";
import { composeLayerGraph } from "../../../gpu-backend/layer/compose_layer.ts";
import { stackedLayout } from "./stack_experts.ts";

type LayerLayout = "split" | "stacked";
import { createSession } from "../../../gpu-backend/execution/ort_session_factory.ts";
import type { Feeds } from "../../../gpu-backend/execution/graph_runner.ts";
import { uniformWaveFeeds } from "./uniform_wave.ts";
import { countsWaveFeeds, zipfCounts } from "./skewed_wave.ts";
import { streamGBps } from "./memory_bandwidth.ts";
import { type OpProfile, profileSession } from "./ort_profile.ts";

const { values } = parseCli({
  name: "deno task bench:kernel",
  summary:
    "onnxruntime alone at N rows per expert (one expert MLP; the whole forward on layer\nexecutables, split and stacked experts, uniform and Zipf-skewed fills), tokens per\nCPU-second as % of the compute limit measured in the same run.",
  options: {
    model: DEMO_MODEL_OPTION,
    rows: {
      type: "string",
      default: "1,2,3,4,8,16,32,64,256",
      value: "<list>",
      description: "rows per expert to measure",
    },
    seconds: {
      type: "string",
      default: "1",
      value: "<s>",
      description: "seconds per measurement",
    },
    skew: {
      type: "string",
      default: "0.5,1",
      value: "<list>",
      description: "Zipf exponents of the skewed waves (rows per expert ∝ 1/rank^s)",
    },
    "skew-mean": {
      type: "string",
      default: "2.66",
      value: "<rows>",
      description: "mean rows per expert of the skewed waves",
    },
    profile: {
      type: "string",
      default: "1,4",
      value: "<list>",
      description: "rows per expert at which to profile layer 0 (onnxruntime profiler; '' skips)",
    },
    out: { type: "string", value: "<file>", description: "also write the report to this file" },
  },
});
const seconds = Number(values.seconds);
const rowList = values.rows.split(",").map(Number);
const { manifest } = await benchModel(values.model, "demo");
const m = manifest;
const read = (part: Parameters<typeof modelPartPath>[1]) =>
  Deno.readFile(join(values.model, modelPartPath(m, part)));

// Step 1: the limit.
const limit = await computeLimit(values.model, m);
console.error(
  `limit: ${limit.gflops.toFixed(1)} GFLOP/s → ${limit.tokensPerS.toFixed(0)} tokens/s`,
);

// The weight-streaming bound: a forward reads every expert's weights once per layer.
const bandwidth = await streamGBps();
let weightBytes = 0;
for (let layer = 0; layer < m.layers; layer++) {
  const parts = [
    { kind: "gate", layer } as const,
    ...Array.from(
      { length: m.experts },
      (_, expert) => ({ kind: "expert", layer, expert }) as const,
    ),
    ...Array.from(
      { length: m.shared_experts },
      (_, expert) => ({ kind: "shared", layer, expert }) as const,
    ),
  ];
  for (const part of parts) {
    weightBytes += (await Deno.stat(join(values.model, modelPartPath(m, part)))).size;
  }
}
const streamMs = weightBytes / (bandwidth * 1e9) * 1000;
console.error(
  `stream: ${bandwidth.toFixed(1)} GB/s; weights ${(weightBytes / 1e6).toFixed(1)} MB → ≥ ${
    streamMs.toFixed(2)
  } ms per forward`,
);

// Step 2: sessions as the backend creates them.
const expertBytes = await read({ kind: "expert", layer: 0, expert: 0 });
const expertFlops = flopsPerRow(expertBytes);
const expert = await createSession(expertBytes, "cpu");
const gate0 = await createSession(await read({ kind: "gate", layer: 0 }), "cpu");
/** Every layer's composed executable hosting all experts, in `layout`. */
const layer0Bytes = new Map<LayerLayout, Uint8Array>();
async function layerSessions(layout: LayerLayout): Promise<ort.InferenceSession[]> {
  const sessions: ort.InferenceSession[] = [];
  for (let layer = 0; layer < m.layers; layer++) {
    const all = Array.from({ length: m.experts }, (_, id) => id);
    const bytes = composeLayerGraph({
      dModel: m.d_model,
      ...(layout === "stacked" ? { routedLayout: stackedLayout } : {}),
      experts: await Promise.all(
        all.map(async (id) => ({ id, bytes: await read({ kind: "expert", layer, expert: id }) })),
      ),
      shared: await Promise.all(
        Array.from(
          { length: m.shared_experts },
          (_, s) => read({ kind: "shared", layer, expert: s }),
        ),
      ),
      ...(layer + 1 < m.layers
        ? {
          nextGate: { bytes: await read({ kind: "gate", layer: layer + 1 }), experts: m.experts },
        }
        : {}),
    });
    if (layer === 0) layer0Bytes.set(layout, bytes);
    sessions.push(await createSession(bytes, "cpu"));
  }
  return sessions;
}
const layers = await layerSessions("split");
const stackedLayers = await layerSessions("stacked");

/** Runs `step` repeatedly for about `seconds`; CPU ms and wall ms per call. */
async function timed(step: () => Promise<unknown>) {
  for (let i = 0; i < 3; i++) await step();
  let calls = 0;
  const cpu0 = processCpuMs("self");
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    await step();
    calls++;
  }
  return {
    cpuMs: (processCpuMs("self") - cpu0) / calls,
    wallMs: (performance.now() - t0) / calls,
  };
}

const tensors = (feeds: Feeds) =>
  Object.fromEntries(
    Object.entries(feeds).map(([name, f]) => [name, new ort.Tensor(f.type, f.data, f.dims)]),
  );

/** Layer 0's gate, then every layer's executable on the same wave. */
function forward(sessions: ort.InferenceSession[], waveFeeds: Feeds) {
  const feeds = tensors(waveFeeds);
  const gateInput = { x: feeds.rows! };
  return timed(async () => {
    await gate0.run(gateInput);
    for (const session of sessions) await session.run(feeds);
  });
}

const rows: (string | number)[][] = [];
for (const r of rowList) {
  const x = new ort.Tensor(
    "float32",
    Float32Array.from({ length: r * m.d_model }, (_, i) => Math.cos(i) * 0.5),
    [r, m.d_model],
  );
  const mlp = await timed(() => expert.run({ x }));
  const mlpGflopsPerCpuS = (r * expertFlops) / (Math.max(mlp.cpuMs, 1e-6) / 1000) / 1e9;

  const wave = uniformWaveFeeds({
    rowsPerExpert: r,
    experts: m.experts,
    topK: m.top_k,
    dModel: m.d_model,
  });
  const split = await forward(layers, wave.feeds);
  const stacked = await forward(stackedLayers, wave.feeds);
  const tokensPerCpuS = wave.rows / (Math.max(split.cpuMs, 1e-6) / 1000);
  const stackedPerCpuS = wave.rows / (Math.max(stacked.cpuMs, 1e-6) / 1000);
  console.error(
    `r=${r}: MLP ${mlpGflopsPerCpuS.toFixed(1)} GFLOP/CPU-s; forward split ${
      tokensPerCpuS.toFixed(0)
    }, stacked ${stackedPerCpuS.toFixed(0)} tokens/CPU-s`,
  );
  rows.push([
    r,
    round(mlp.wallMs * 1000, 1),
    round(mlpGflopsPerCpuS, 1),
    round((100 * mlpGflopsPerCpuS) / limit.gflops, 1),
    wave.rows,
    round(split.wallMs, 3),
    round(tokensPerCpuS, 0),
    round((100 * tokensPerCpuS) / limit.tokensPerS, 1),
    round(stacked.wallMs, 3),
    round((100 * stackedPerCpuS) / limit.tokensPerS, 1),
    round(stackedPerCpuS / tokensPerCpuS, 2),
    round(Math.min(100, (100 * wave.rows) / (streamMs / 1000) / limit.tokensPerS), 1),
  ]);
}

// Step 3: skewed waves (Zipf-like rows per expert at the demo mix's mean fill).
const skewRows: (string | number)[][] = [];
const skewMean = Number(values["skew-mean"]);
for (const s of values.skew.split(",").filter((x) => x !== "").map(Number)) {
  const counts = zipfCounts(m.experts, Math.round(skewMean * m.experts), s);
  const wave = countsWaveFeeds(counts, m.top_k, m.d_model);
  const split = await forward(layers, wave.feeds);
  const stacked = await forward(stackedLayers, wave.feeds);
  const perCpuS = (cpuMs: number) => wave.rows / (Math.max(cpuMs, 1e-6) / 1000);
  console.error(`zipf s=${s}: counts ${[...counts].join(",")}`);
  skewRows.push([
    s,
    Math.max(...counts),
    counts.filter((c) => c === 0).length,
    wave.rows,
    round(split.wallMs, 3),
    round((100 * perCpuS(split.cpuMs)) / limit.tokensPerS, 1),
    round(stacked.wallMs, 3),
    round((100 * perCpuS(stacked.cpuMs)) / limit.tokensPerS, 1),
    round(split.cpuMs / stacked.cpuMs, 2),
  ]);
}

// Step 4: where layer 0's run goes (onnxruntime's profiler), split and stacked.
const profileRows: (string | number)[][] = [];
for (const r of values.profile.split(",").filter((x) => x !== "").map(Number)) {
  const wave = uniformWaveFeeds({
    rowsPerExpert: r,
    experts: m.experts,
    topK: m.top_k,
    dModel: m.d_model,
  });
  for (const layout of ["split", "stacked"] as const) {
    const profile: OpProfile = await profileSession(layer0Bytes.get(layout)!, wave.feeds, 30);
    let matmul = 0;
    let other = 0;
    let nodes = 0;
    for (const [op, { us, nodes: n }] of profile.ops) {
      if (op === "MatMul" || op === "Gemm" || op === "FusedMatMul") matmul += us;
      else other += us;
      nodes += n;
    }
    const between = Math.max(0, profile.runUs - matmul - other);
    const share = (us: number) => `${round(us, 0)} (${round((100 * us) / profile.runUs, 0)} %)`;
    profileRows.push([
      r,
      layout,
      round(profile.runUs, 0),
      share(matmul),
      share(other),
      share(between),
      round(nodes, 0),
    ]);
  }
}

const lines = [
  "# bench:kernel",
  "",
  `Command: \`deno task bench:kernel ${Deno.args.join(" ")}\``.replace(/ `$/, "`"),
  "",
  `Model ${m.name}: ${m.layers} layers × ${m.experts} experts, top-${m.top_k}, ${m.shared_experts} shared, ` +
  `d_model ${m.d_model}, d_ff ${m.d_ff}. Machine: ${navigator.hardwareConcurrency} cores, shared with ` +
  `other work while this ran (compare within the run). onnxruntime sessions single-threaded as the ` +
  `backend creates them; ${seconds} s per point; CPU of this process from /proc/self/stat.`,
  "",
  `Limit (as bench:baseline): ${
    round(limit.gflops, 1)
  } GFLOP per CPU-second, single-thread MatMul at batch 256; ` +
  `${round(limit.flopsPerToken / 1e6, 3)} MFLOP per token → **${
    round(limit.tokensPerS, 0)
  } tokens/s per core**.`,
  "",
  `Memory: a single-thread ReduceSum over 128 MB streams ${
    round(bandwidth, 1)
  } GB per CPU-second; ` +
  `one forward reads ${round(weightBytes / 1e6, 1)} MB of weights (every expert of every layer, ` +
  `the model's ONNX files) → at least **${round(streamMs, 2)} ms per forward at any fill** ` +
  "(`stream bound % limit`: wave tokens in that time ÷ the limit, capped at 100).",
  "",
  "```",
  formatTable(
    [
      "rows/expert",
      "MLP µs/run",
      "MLP GFLOP/CPU-s",
      "MLP % limit",
      "wave tokens",
      "forward ms",
      "forward tokens/CPU-s",
      "forward % limit",
      "stacked ms",
      "stacked % limit",
      "stacked ÷ split",
      "stream bound % limit",
    ],
    rows,
  ),
  "```",
  "",
  `Skewed waves: ${Math.round(skewMean * m.experts)} assignments (mean ${skewMean} rows per ` +
  `expert) spread over the ${m.experts} experts as count ∝ 1/rank^s; the stacked layout pads ` +
  "every expert to the fullest one.",
  "",
  "```",
  formatTable(
    [
      "zipf s",
      "max rows",
      "experts with 0",
      "wave tokens",
      "split ms",
      "split % limit",
      "stacked ms",
      "stacked % limit",
      "stacked ÷ split",
    ],
    skewRows,
  ),
  "```",
  "",
  "MLP: one expert (the model's own `L0/E0` file, " +
  `${
    round(expertFlops / 1e6, 3)
  } MFLOP per row) on r rows; % limit = its GFLOP/s per CPU-second ÷ ` +
  "the limit's GFLOP/s. forward: layer 0's gate, then each layer's composed executable hosting all " +
  `${m.experts} experts (shared experts, next gate fused) on a wave of ⌈r·${m.experts}/${m.top_k}⌉ ` +
  "tokens where every expert gets exactly r rows; tokens per CPU-second ÷ the limit. This is " +
  "onnxruntime alone: no HTTP, decoding, routing or batching — the most a serving path can reach " +
  "when its waves hold r rows per expert (bench:baseline's `rows/expert/wave` column says how many " +
  "they hold). Split (what the backend runs; the `forward` columns): rows grouped by expert → Split → " +
  "each expert's own inlined graph → Concat → weighted scatter-add. Stacked " +
  "(`tools/bench/kernel/stack_experts.ts`): the experts' weights stacked `[E, …]`, rows gathered " +
  "into a padded `[E, R_max, d]` tensor, one batched MatMul per weight, masked weighted " +
  "scatter-add. `stacked ÷ split` is the ratio of tokens per CPU-second (> 1: stacked is faster).",
  ...(profileRows.length === 0 ? [] : [
    "",
    "Where layer 0's run goes (onnxruntime's profiler, 30 runs after 3 warm-ups, uniform wave; " +
    "µs per run and share of the run). MatMul/Gemm: the expert, shared-expert and gate matrix " +
    "kernels (onnxruntime fuses MatMul + bias into Gemm); other kernels: every other node " +
    "(activations, Split, Concat, Gather, ScatterND …); between kernels: the rest of the run " +
    "(executor, allocation, shape work).",
    "",
    "```",
    formatTable(
      [
        "rows/expert",
        "layout",
        "run µs",
        "MatMul/Gemm µs",
        "other kernels µs",
        "between kernels µs",
        "nodes/run",
      ],
      profileRows,
    ),
    "```",
  ]),
];
const text = lines.join("\n");
console.log(text);
if (values.out) await Deno.writeTextFile(values.out, text + "\n");
Deno.exit(0);
