// deno-lint-ignore-file no-console
/**
 * @module CLI of `deno task gen-model`: writes the demo MoE model directory.
 *
 * `deno task gen-model [--out models/demo] [--seed 42] [--d-model 256] [--d-ff 1024]
 * [--layers 2] [--experts 32] [--top-k 2] [--groups 4] [--topk-group 2] [--shared 1]
 * [--activation silu|relu] [--name demo-moe] [--force]`; without `--force` an existing
 * `moe.json` is kept and the run is skipped.
 */
import { join } from "node:path";
import { type CliOption, parseCliArgs } from "../cli/cli_args.ts";
import { listModelParts, modelPartPath } from "../../shared/model_manifest.ts";
import { generateModel, type GenerateModelOptions, MANIFEST_FILE } from "./generate.ts";

const INTEGER_FLAGS = {
  "seed": "seed",
  "d-model": "dModel",
  "d-ff": "dFf",
  "layers": "layers",
  "experts": "experts",
  "top-k": "topK",
  "groups": "groups",
  "topk-group": "topkGroup",
  "shared": "sharedExperts",
} as const;

const INTEGER_HELP: Record<keyof typeof INTEGER_FLAGS, string> = {
  "seed": "PRNG seed (default 42)",
  "d-model": "hidden width (default 256)",
  "d-ff": "expert inner width (default 1024)",
  "layers": "MoE layers (default 2)",
  "experts": "routed experts per layer (default 32)",
  "top-k": "experts per token (default 2)",
  "groups": "expert groups (default 4)",
  "topk-group": "groups kept per token (default 2)",
  "shared": "shared experts per layer (default 1)",
};

/** The command line of `deno task gen-model`. */
export const GEN_MODEL_CLI = {
  name: "deno task gen-model",
  summary:
    "Writes a deterministic demo MoE model directory (moe.json, one ONNX file per gate and\n" +
    "expert, demo_traffic.json) whose request types prefer distinct experts. An existing\n" +
    "moe.json is kept unless --force.",
  options: {
    out: { type: "string", default: "models/demo", value: "<dir>", description: "model directory" },
    name: { type: "string", value: "<name>", description: "model name (default demo-moe)" },
    activation: {
      type: "string",
      value: "<silu|relu>",
      description: "expert activation (default silu)",
    },
    force: { type: "boolean", default: false, description: "regenerate an existing model" },
    ...Object.fromEntries(
      Object.entries(INTEGER_HELP).map((
        [flag, description],
      ) => [flag, { type: "string" as const, value: "<n>", description }]),
    ) as Record<keyof typeof INTEGER_FLAGS, CliOption & { type: "string" }>,
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
  const out = String(values.out);
  const options: GenerateModelOptions = {};
  for (const [flag, key] of Object.entries(INTEGER_FLAGS)) {
    const raw = values[flag as keyof typeof values];
    if (raw === undefined) continue;
    const value = Number(raw);
    if (!Number.isInteger(value)) {
      throw new RangeError(`Cannot parse --${flag}: "${raw}" is not an integer`);
    }
    options[key] = value;
  }
  if (values.name !== undefined) options.name = String(values.name);
  if (values.activation !== undefined) {
    if (values.activation !== "silu" && values.activation !== "relu") {
      throw new RangeError(`Cannot parse --activation: "${values.activation}" is not silu or relu`);
    }
    options.activation = values.activation;
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
      `(top-${manifest.top_k}, ${manifest.groups} groups, ${manifest.shared_experts} shared) ` +
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
