/**
 * @module How many bytes one routed expert holds when warm: the size of its ONNX file
 * (float32 initializers dominate; the graph adds a few hundred bytes), or, where the
 * file is missing (the simulated executor needs none), the manifest's estimate.
 */
import { join } from "node:path";
import {
  expertWeightBytes,
  type ModelManifest,
  modelPartPath,
} from "../../shared/model_manifest.ts";

/** Weight bytes of one routed expert estimated from the manifest's shape. */
export function estimatedExpertBytes(manifest: ModelManifest): number {
  return expertWeightBytes(
    manifest.d_model,
    manifest.d_ff,
    manifest.expert_kind,
    manifest.weight_dtype === "float16" ? 2 : 4,
  );
}

/** Bytes of every routed expert, `[layer][expert]`: its file size, else the estimate. */
export async function expertFileBytes(
  modelDir: string,
  manifest: ModelManifest,
): Promise<number[][]> {
  const estimate = estimatedExpertBytes(manifest);
  return await Promise.all(
    Array.from(
      { length: manifest.layers },
      (_, layer) =>
        Promise.all(Array.from({ length: manifest.experts }, async (_, expert) => {
          const path = join(modelDir, modelPartPath(manifest, { kind: "expert", layer, expert }));
          try {
            return (await Deno.stat(path)).size;
          } catch {
            return estimate;
          }
        })),
    ),
  );
}
