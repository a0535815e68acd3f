/**
 * @module The launcher's model step: use the configured model directory, or generate the
 * demo model — but only into the default demo directory, or anywhere when asked with
 * `--demo`. A configured `model.dir` without `moe.json` is a mistake (a typo, a missing
 * mount), never a reason to serve random weights under the operator's path.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type ModelManifest, ModelManifestSchema } from "../../shared/model_manifest.ts";
import { generateModel, MANIFEST_FILE } from "../model/generate.ts";

/** Where `deno task start` puts the demo model unless `model.dir` says otherwise. */
export const DEFAULT_MODEL_DIR = "models/demo";

/** Options of {@linkcode prepareModel}. */
export interface PrepareModelOptions {
  /** `--demo`: generate the demo model into `dir` even when it is not the default one. */
  demo?: boolean;
  /** Where `dir` came from, for the error message (e.g. `SWITCHYARD_MODEL__DIR`). */
  source?: string;
  /** Progress lines (generation). */
  log?: (line: string) => void;
}

/** The model directory is unusable; the message names the path and the fix. */
export class ModelSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelSetupError";
  }
}

/** Returns the manifest in `dir`, generating the demo model first where that is allowed. */
export async function prepareModel(
  dir: string,
  options: PrepareModelOptions = {},
): Promise<ModelManifest> {
  const log = options.log ?? (() => {});
  const manifestPath = join(dir, MANIFEST_FILE);
  if (!existsSync(manifestPath)) {
    const isDefault = resolve(dir) === resolve(DEFAULT_MODEL_DIR);
    if (!isDefault && !options.demo) {
      throw new ModelSetupError(
        `Cannot start: no model at "${resolve(manifestPath)}" (model.dir "${dir}"${
          options.source ? ` from ${options.source}` : ""
        }). Point model.dir (or SWITCHYARD_MODEL__DIR) at a directory holding moe.json, ` +
          `or pass --demo to generate the demo model there`,
      );
    }
    await generateDemo(dir, log);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await Deno.readTextFile(manifestPath));
  } catch (error) {
    throw new ModelSetupError(
      `Cannot start: cannot read "${resolve(manifestPath)}": ${(error as Error).message}`,
    );
  }
  const parsed = ModelManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ModelSetupError(
      `Cannot start: "${resolve(manifestPath)}" is not a model manifest: ${
        issue.path.join(".")
      }: ${issue.message}`,
    );
  }
  return parsed.data;
}

async function generateDemo(dir: string, log: (line: string) => void): Promise<void> {
  log(`Generating the demo model into ${dir} (first start only)…`);
  const started = performance.now();
  let lastReport = started;
  await generateModel(dir, {
    onProgress(written, total) {
      const now = performance.now();
      if (written < total && now - lastReport < 2000) return;
      lastReport = now;
      log(`  ${written}/${total} ONNX files, ${((now - started) / 1000).toFixed(1)} s`);
    },
  });
  log(`  done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
