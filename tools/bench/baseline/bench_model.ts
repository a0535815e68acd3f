/**
 * @module The model and request sizes the data-plane benchmarks (`bench:baseline`,
 * `bench:hop`) share: the demo model (generated when missing), its manifest parsed with the
 * schema, and one prepared binary workload per request size.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ModelManifest } from "../../../shared/model_manifest.ts";
import { loadManifest } from "../../../gpu-backend/server/start_backend.ts";
import { generateModel } from "../../model/generate.ts";
import { loadDemoTraffic } from "../../model/traffic.ts";
import { type PreparedRequest, prepareWorkload } from "../workload.ts";

/** The internal token the benchmarks' own processes share. */
export const BENCH_TOKEN = "bench-internal-token-0123456789";

/** One request size: "demo mix (1–6)" or "N tokens", and its prepared requests. */
export interface SizedWorkload {
  size: string;
  requests: PreparedRequest[];
}

/**
 * Loads (or generates) the model in `dir` and prepares a workload per size in `sizes`
 * (comma-separated: `demo` for the 1–6 token mix, or a token count).
 */
export async function benchModel(dir: string, sizes: string) {
  if (!existsSync(join(dir, "moe.json"))) await generateModel(dir, {});
  // Parsed with the schema: the engine in process needs the defaults (router family …).
  const manifest: ModelManifest = await loadManifest(dir);
  const traffic = await loadDemoTraffic(dir);
  const auth = { authorization: `Bearer ${BENCH_TOKEN}` };
  const workloads: SizedWorkload[] = sizes.split(",").map((size) => ({
    size: size === "demo" ? "demo mix (1–6)" : `${size} tokens`,
    requests: prepareWorkload({
      dModel: manifest.d_model,
      traffic,
      headers: auth,
      count: size === "demo" ? 512 : 64,
      ...(size === "demo" ? { maxRows: 6 } : { rows: Number(size) }),
    }),
  }));
  return { manifest, auth, workloads };
}
