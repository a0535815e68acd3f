/**
 * @module The model a benchmark runs: the given directory, else the demo model for real
 * executors or a small, wide generated one for simulated pools (many experts, d_model 64)
 * — generated on first use.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { generateModel } from "../model/generate.ts";

/** The benchmark model's directory, generated if missing. */
export async function benchModelDir(options: {
  dir: string | undefined;
  simulated: boolean;
  experts: number;
  topK: number;
}): Promise<string> {
  const dir = options.dir ??
    (options.simulated ? `models/sim-${options.experts}-top${options.topK}` : "models/demo");
  if (!existsSync(join(dir, "moe.json"))) {
    await generateModel(
      dir,
      options.simulated
        ? {
          dModel: 64,
          dFf: 256,
          experts: options.experts,
          topK: options.topK,
          groups: 8,
          topkGroup: 4,
          name: "sim-moe",
        }
        : {},
    );
  }
  return dir;
}
