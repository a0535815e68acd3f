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
 *           where every expert gets exactly `r` rows (`kernel/uniform_wave.ts`).
 *           Single-thread sessions as the backend creates them; CPU time of this process
 *           from `/proc/self/stat`; no JavaScript work inside the timed loop beyond
 *           `session.run()`.
 *
 * Reported: GFLOP/s and tokens per CPU-second, and both as % of the limit — the most a
 * serving path can reach when its waves hold `r` rows per expert.
 */
import { join } from "node:path";
import ort from "onnxruntime-node";
import { computeLimit, flopsPerRow } from "./compute_limit.ts";
import { benchModel } from "./baseline/bench_model.ts";
import { processCpuMs } from "./cpu_time.ts";
import { formatTable, round } from "./stats.ts";
import { parseCli } from "../cli/cli_args.ts";
import { modelPartPath } from "../../shared/model_manifest.ts";
import { composeLayerGraph } from "../../gpu-backend/layer/compose_layer.ts";
import { createSession } from "../../gpu-backend/execution/ort_session_factory.ts";
import type { Feeds } from "../../gpu-backend/execution/graph_runner.ts";
import { uniformWaveFeeds } from "./kernel/uniform_wave.ts";

const { values } = parseCli({
  name: "deno task bench:kernel",
  summary:
    "onnxruntime alone at N rows per expert (one expert MLP; the whole forward on layer\nexecutables), tokens per CPU-second as % of the compute limit measured in the same run.",
  options: {
    model: {
      type: "string",
      default: "models/demo",
      value: "<dir>",
      description: "model directory",
    },
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

// Step 2: sessions as the backend creates them.
const expertBytes = await read({ kind: "expert", layer: 0, expert: 0 });
const expertFlops = flopsPerRow(expertBytes);
const expert = await createSession(expertBytes, "cpu");
const gate0 = await createSession(await read({ kind: "gate", layer: 0 }), "cpu");
const layers: ort.InferenceSession[] = [];
for (let layer = 0; layer < m.layers; layer++) {
  const all = Array.from({ length: m.experts }, (_, id) => id);
  const bytes = composeLayerGraph({
    dModel: m.d_model,
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
      ? { nextGate: { bytes: await read({ kind: "gate", layer: layer + 1 }), experts: m.experts } }
      : {}),
  });
  layers.push(await createSession(bytes, "cpu"));
}

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
  const feeds = tensors(wave.feeds);
  const gateInput = { x: feeds.rows! };
  const forward = await timed(async () => {
    await gate0.run(gateInput);
    for (const session of layers) await session.run(feeds);
  });
  const tokensPerCpuS = wave.rows / (Math.max(forward.cpuMs, 1e-6) / 1000);
  console.error(
    `r=${r}: MLP ${mlpGflopsPerCpuS.toFixed(1)} GFLOP/CPU-s; forward ${
      tokensPerCpuS.toFixed(0)
    } tokens/CPU-s`,
  );
  rows.push([
    r,
    round(mlp.wallMs * 1000, 1),
    round(mlpGflopsPerCpuS, 1),
    round((100 * mlpGflopsPerCpuS) / limit.gflops, 1),
    wave.rows,
    round(forward.wallMs, 3),
    round(tokensPerCpuS, 0),
    round((100 * tokensPerCpuS) / limit.tokensPerS, 1),
  ]);
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
    ],
    rows,
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
  "they hold).",
];
const text = lines.join("\n");
console.log(text);
if (values.out) await Deno.writeTextFile(values.out, text + "\n");
Deno.exit(0);
