// deno-lint-ignore-file no-console
/**
 * @module CLI of `deno task import --from <checkpoint dir> --out <model dir> [--name n]
 * [--keep-fp16] [--force]`: imports a Hugging Face safetensors checkpoint's MoE layers
 * (Mixtral, Qwen2-MoE, Qwen3-MoE, OLMoE, DeepSeek-V2, DeepSeek-V3) as a model directory and
 * prints what was imported and what was left out. Without `--force` an existing
 * `moe.json` in `--out` stops the import.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MANIFEST_FILE } from "../model/generate.ts";
import { importCheckpoint, type ImportReport } from "./import_model.ts";

/** Parses the command line, imports, and reports to `log`; returns the exit code. */
export async function main(
  args: string[],
  log: (line: string) => void = console.log,
): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      from: { type: "string" },
      out: { type: "string" },
      name: { type: "string" },
      "keep-fp16": { type: "boolean", default: false },
      force: { type: "boolean", default: false },
    },
  });
  if (values.from === undefined) {
    throw new RangeError("Cannot import: --from <checkpoint dir> is required");
  }
  if (values.out === undefined) {
    throw new RangeError("Cannot import: --out <model dir> is required");
  }
  if (!values.force && await exists(join(values.out, MANIFEST_FILE))) {
    throw new RangeError(
      `Cannot import: ${join(values.out, MANIFEST_FILE)} exists (use --force to replace it)`,
    );
  }
  const started = performance.now();
  const report = await importCheckpoint({
    from: values.from,
    out: values.out,
    ...(values.name !== undefined ? { name: values.name } : {}),
    keepFp16: values["keep-fp16"],
  });
  for (
    const line of describe(report, values.from, values.out, (performance.now() - started) / 1000)
  ) log(line);
  return 0;
}

/** The import's summary, line by line. */
export function describe(
  report: ImportReport,
  from: string,
  out: string,
  seconds: number,
): string[] {
  const { manifest: m, plan } = report;
  const r = m.router;
  const groups = m.groups > 1 ? `, ${m.topk_group}/${m.groups} groups by ${r.group_score}` : "";
  const bias = r.e_score_correction_bias ? ", e_score_correction_bias" : "";
  const shared = m.shared_experts > 0
    ? `, 1 shared expert (d_ff ${m.shared_d_ff}${plan.sharedGate ? ", sigmoid-gated" : ""})`
    : "";
  return [
    `import: ${plan.modelType} checkpoint ${from} → ${out} as "${m.name}"`,
    `  MoE layers: checkpoint layers [${plan.moeLayers.join(", ")}] → served layers 0..${
      m.layers - 1
    }`,
    `  experts: ${m.experts} × SwiGLU ${m.activation} (d_model ${m.d_model}, d_ff ${m.d_ff})${shared}`,
    `  router: ${r.scoring}, top-${m.top_k}${groups}${bias}, norm_topk_prob ${r.norm_topk_prob}, ` +
    `routed_scaling_factor ${r.routed_scaling_factor}`,
    `  norm: post_attention_layernorm (RMSNorm, eps ${m.norm?.epsilon}) inside every part: h + MoE(norm(h))`,
    `  weights: ${report.weightDtypeNote}`,
    `  not imported: dense layers [${report.denseLayers.join(", ")}]; ` +
    `${report.leftOut.reduce((a, b) => a + b.count, 0)} tensors:`,
    ...report.leftOut.map(({ pattern, count }) => `    ${pattern} ×${count}`),
    `  wrote ${report.files} ONNX files (${
      (report.bytes / 1e6).toFixed(2)
    } MB) and ${MANIFEST_FILE} ` +
    `in ${seconds.toFixed(2)} s`,
  ];
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (error) {
    console.error(`import: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
}
