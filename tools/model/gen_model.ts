// deno-lint-ignore-file no-console
/**
 * @module CLI of `deno task gen-model`: writes the demo MoE model directory.
 *
 * `deno task gen-model [--preset demo|bench] [--out models/<preset>] [--force] [generator
 * flags]`: the preset (`presets.ts`) gives the starting options, the generator flags of
 * `gen_model_flags.ts` (`--seed 42 --d-model 256 --experts 32 --expert-kind swiglu
 * --activation gelu --scoring sigmoid …`) override its fields; without `--force` an
 * existing `moe.json` is kept and the run is skipped.
 */
import { join } from "node:path";
import { type CliOption, parseCliArgs } from "../cli/cli_args.ts";
import { listModelParts, modelPartPath } from "../../shared/model_manifest.ts";
import { generateModel, type GenerateModelOptions, MANIFEST_FILE } from "./generate.ts";
import { GENERATOR_FLAGS } from "./gen_model_flags.ts";
import { MODEL_PRESETS, modelPreset } from "./presets.ts";

/** The command line of `deno task gen-model`. */
export const GEN_MODEL_CLI = {
  name: "deno task gen-model",
  summary:
    "Writes a deterministic demo MoE model directory (moe.json, one ONNX file per gate and\n" +
    "expert, demo_traffic.json) whose request types prefer distinct experts. An existing\n" +
    "moe.json is kept unless --force. A preset gives the starting options; flags override them.",
  options: {
    preset: {
      type: "string",
      default: "demo",
      value: "<name>",
      description: `starting options: ${
        Object.entries(MODEL_PRESETS).map(([name, p]) => `${name} (${p.summary})`).join("; ")
      }`,
    },
    out: {
      type: "string",
      value: "<dir>",
      description: "model directory (default: the preset's, models/demo or models/bench)",
    },
    force: { type: "boolean", default: false, description: "regenerate an existing model" },
    ...Object.fromEntries(
      Object.entries(GENERATOR_FLAGS).map((
        [flag, spec],
      ) => [flag, { type: "string" as const, value: "<value>", description: spec.help }]),
    ) as Record<string, CliOption & { type: "string" }>,
  },
} as const;

/** Parses the command line, generates the model and reports a one-line summary to `log`. */
export async function main(
  args: string[],
  log: (line: string) => void = console.log,
): Promise<number> {
  const parsed = parseCliArgs(GEN_MODEL_CLI, args);
  if (parsed.kind === "exit") {
    if (parsed.code !== 0) throw new RangeError(parsed.text);
    log(parsed.text);
    return 0;
  }
  const values = parsed.values;
  const preset = modelPreset(values.preset);
  const out = values.out ?? preset.out;
  const options: GenerateModelOptions = { ...preset.options };
  for (const [flag, spec] of Object.entries(GENERATOR_FLAGS)) {
    const raw = values[flag as keyof typeof values];
    if (typeof raw === "string") spec.apply(options, raw, flag);
  }
  if (!values.force && await exists(join(out, MANIFEST_FILE))) {
    log(
      `gen-model: ${join(out, MANIFEST_FILE)} exists, skipping (use --force to regenerate)`,
    );
    return 0;
  }
  const started = performance.now();
  const manifest = await generateModel(out, options);
  const seconds = (performance.now() - started) / 1000;
  let bytes = 0;
  const parts = listModelParts(manifest);
  for (const part of parts) {
    bytes += (await Deno.stat(join(out, modelPartPath(manifest, part)))).size;
  }
  log(
    `gen-model: wrote "${manifest.name}" to ${out}: ${parts.length} ONNX files, ` +
      `${(bytes / 1e6).toFixed(1)} MB, ${manifest.layers} layers × ${manifest.experts} experts ` +
      `(top-${manifest.top_k}, ${manifest.groups} groups, ${manifest.shared_experts} shared, ` +
      `${manifest.expert_kind} ${manifest.activation}, ${manifest.router.scoring} router) ` +
      `in ${seconds.toFixed(2)} s`,
  );
  return 0;
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
    console.error(`gen-model: ${error instanceof Error ? error.message : String(error)}`);
    Deno.exit(1);
  }
}
