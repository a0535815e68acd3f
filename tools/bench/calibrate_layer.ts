// deno-lint-ignore-file no-console
/**
 * @module `deno run -A tools/bench/calibrate_layer.ts`: MEASURES the simulated layer
 * runner's device time on this machine — one composed layer execution on onnxruntime
 * (`gpu-backend/layer/calibrate_layer.ts`) — and prints the fit and the settings to pass
 * to simulated backends. Benchmarks call `calibrateLayerFromOrt()` in their own run.
 */
import { parseCli } from "../cli/cli_args.ts";
import { calibrateLayerFromOrt } from "../../gpu-backend/layer/calibrate_layer.ts";
import { loadManifest } from "../../gpu-backend/server/start_backend.ts";

const { values } = parseCli({
  name: "deno run -A tools/bench/calibrate_layer.ts",
  summary: "Measures one composed layer execution on onnxruntime (CPU, one thread) at a few\n" +
    "batch sizes and spreads and fits fixed_ms + per_expert_ms · experts touched +\n" +
    "per_row_ms · work rows for backend.simulated.",
  options: {
    model: { type: "string", default: "models/bench", value: "<dir>", description: "model" },
    hosted: {
      type: "string",
      value: "<n>",
      description: "routed experts the executable hosts (default: all; use the pool's slots)",
    },
    batches: {
      type: "string",
      default: "1,4,16,64",
      value: "<list>",
      description: "entry tokens per execution",
    },
    spreads: {
      type: "string",
      value: "<list>",
      description: "experts the tokens spread over (default: top_k, 4·top_k, hosted)",
    },
    repeats: { type: "string", default: "5", value: "<n>", description: "timed runs per batch" },
    layer: { type: "string", default: "0", value: "<n>", description: "layer measured" },
  },
});

const manifest = await loadManifest(values.model);
const calibration = await calibrateLayerFromOrt(values.model, manifest, {
  ...(values.hosted !== undefined ? { hosted: Number(values.hosted) } : {}),
  batches: values.batches.split(",").map(Number),
  ...(values.spreads !== undefined ? { spreads: values.spreads.split(",").map(Number) } : {}),
  repeats: Number(values.repeats),
  layer: Number(values.layer),
});
console.log(calibration.method);
for (const { rows, experts, ms } of calibration.samples) {
  const fit = calibration.fixedMs + calibration.perExpertMs * experts +
    calibration.perRowMs * rows;
  console.log(
    `  ${rows.toFixed(1).padStart(8)} work rows  ${String(experts).padStart(4)} experts touched` +
      `  ${ms.toFixed(3).padStart(8)} ms  (fit ${fit.toFixed(3)})`,
  );
}
const { fixedMs, perExpertMs, perRowMs } = calibration;
console.log(
  `fixed_ms ${fixedMs.toFixed(4)}  per_expert_ms ${perExpertMs.toFixed(5)}  ` +
    `per_row_ms ${perRowMs.toFixed(5)}\n` +
    `SWITCHYARD_BACKEND__SIMULATED__FIXED_MS=${fixedMs.toFixed(4)} ` +
    `SWITCHYARD_BACKEND__SIMULATED__PER_EXPERT_MS=${perExpertMs.toFixed(5)} ` +
    `SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS=${perRowMs.toFixed(5)}`,
);
