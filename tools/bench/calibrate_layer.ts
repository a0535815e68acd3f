// deno-lint-ignore-file no-console
/**
 * @module `deno run -A tools/bench/calibrate_layer.ts`: MEASURES the simulated layer
 * runner's device time on this machine — one composed layer execution on onnxruntime
 * (`gpu-backend/layer/calibrate_layer.ts`) per hosted count — and prints each fit, its
 * samples and the settings to pass to simulated backends; `--out` writes the same as a
 * results file (header first). Benchmarks call `calibrateLayerFromOrt()` in their own run.
 */
import { parseCli } from "../cli/cli_args.ts";
import { calibrateLayerFromOrt } from "../../gpu-backend/layer/calibrate_layer.ts";
import { loadManifest } from "../../gpu-backend/server/start_backend.ts";
import { resultsHeader } from "./results_header.ts";

const { values } = parseCli({
  name: "deno run -A tools/bench/calibrate_layer.ts",
  summary: "Measures one composed layer execution on onnxruntime (CPU, one thread) at a few\n" +
    "batch sizes and spreads and fits fixed_ms + per_expert_ms · experts touched +\n" +
    "per_row_ms · work rows for backend.simulated.",
  options: {
    model: { type: "string", default: "models/bench", value: "<dir>", description: "model" },
    hosted: {
      type: "string",
      value: "<list>",
      description: "routed experts the executable hosts, one fit each (default: all)",
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
    out: { type: "string", value: "<file.md>", description: "also write a results file" },
  },
});

const numbers = (text: string) => text.split(",").map(Number);
const manifest = await loadManifest(values.model);
const lines: string[] = [];
const say = (line: string) => {
  console.log(line);
  lines.push(line);
};
for (const hosted of values.hosted === undefined ? [manifest.experts] : numbers(values.hosted)) {
  const calibration = await calibrateLayerFromOrt(values.model, manifest, {
    hosted,
    batches: numbers(values.batches),
    ...(values.spreads !== undefined ? { spreads: numbers(values.spreads) } : {}),
    repeats: Number(values.repeats),
    layer: Number(values.layer),
  });
  const { fixedMs, perExpertMs, perRowMs } = calibration;
  say(`--hosted ${hosted}`);
  say(calibration.method);
  for (const { rows, experts, ms } of calibration.samples) {
    const fit = fixedMs + perExpertMs * experts + perRowMs * rows;
    say(
      `  ${rows.toFixed(1).padStart(8)} work rows  ${String(experts).padStart(4)} experts touched` +
        `  ${ms.toFixed(3).padStart(8)} ms  (fit ${fit.toFixed(3)})`,
    );
  }
  say(
    `fixed_ms ${fixedMs.toFixed(4)}  per_expert_ms ${perExpertMs.toFixed(5)}  ` +
      `per_row_ms ${perRowMs.toFixed(5)}`,
  );
  say(
    `SWITCHYARD_BACKEND__SIMULATED__FIXED_MS=${fixedMs.toFixed(4)} ` +
      `SWITCHYARD_BACKEND__SIMULATED__PER_EXPERT_MS=${perExpertMs.toFixed(5)} ` +
      `SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS=${perRowMs.toFixed(5)}`,
  );
}
if (values.out !== undefined) {
  const header = await resultsHeader({
    command: ["deno run -A tools/bench/calibrate_layer.ts", ...Deno.args].join(" "),
    notes: [
      `what: onnxruntime CPU, 1 thread, one composed layer executable of ${manifest.name} per ` +
      "hosted count; the median time per batch and spread, and the non-negative least-squares " +
      "fit over experts given rows and work rows; output verbatim",
    ],
  });
  await Deno.writeTextFile(
    values.out,
    [
      `# A composed layer's device time: per execution, per expert given rows, per row`,
      "",
      ...header,
      "",
      "```",
      ...lines,
      "```",
      "",
    ].join("\n"),
  );
  console.log(`wrote ${values.out}`);
}
