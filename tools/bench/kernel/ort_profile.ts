/**
 * @module Where one onnxruntime session's run time goes, from onnxruntime's own profiler:
 * per op type the kernel microseconds per run, and the rest of `model_run` (executor,
 * allocation, shape work between kernels). Used by `bench:kernel --profile` to say whether
 * a layer executable at a given fill is bound by its MatMul kernels or by per-node overhead.
 */
import ort from "onnxruntime-node";
import type { Feeds } from "../../../gpu-backend/execution/graph_runner.ts";

/** Per-run split of one session's time. */
export interface OpProfile {
  /** Microseconds per `model_run` (wall, single thread). */
  runUs: number;
  /** Op type → kernel microseconds per run and nodes executed per run. */
  ops: Map<string, { us: number; nodes: number }>;
}

interface ProfileEvent {
  cat?: string;
  name?: string;
  dur?: number;
  ts?: number;
  args?: { op_name?: string };
}

/** Pure: aggregates onnxruntime profiler events of `runs` timed runs (warm-ups excluded). */
export function summarizeProfile(events: readonly ProfileEvent[], skip: number): OpProfile {
  const runs = events.filter((e) => e.name === "model_run");
  const timed = runs.slice(skip);
  const from = timed[0]?.ts ?? Infinity;
  const counted = events.filter((e) =>
    e.cat === "Node" && e.name?.endsWith("_kernel_time") && (e.ts ?? 0) >= from
  );
  const ops = new Map<string, { us: number; nodes: number }>();
  for (const e of counted) {
    const op = e.args?.op_name ?? "?";
    const entry = ops.get(op) ?? { us: 0, nodes: 0 };
    entry.us += (e.dur ?? 0) / timed.length;
    entry.nodes += 1 / timed.length;
    ops.set(op, entry);
  }
  const runUs = timed.reduce((sum, e) => sum + (e.dur ?? 0), 0) / Math.max(timed.length, 1);
  return { runUs, ops };
}

/** Profiles `runs` runs of `bytes` on `feeds` (after 3 warm-ups), single thread. */
export async function profileSession(
  bytes: Uint8Array,
  feeds: Feeds,
  runs: number,
): Promise<OpProfile> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-ort-profile-" });
  try {
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: ["cpu"],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      enableProfiling: true,
      profileFilePrefix: `${dir}/run`,
    });
    const tensors = Object.fromEntries(
      Object.entries(feeds).map(([name, f]) => [name, new ort.Tensor(f.type, f.data, f.dims)]),
    );
    const skip = 3;
    for (let i = 0; i < skip + runs; i++) await session.run(tensors);
    session.endProfiling();
    await session.release();
    const [file] = [...Deno.readDirSync(dir)].filter((f) => f.name.endsWith(".json"));
    if (!file) throw new Error("onnxruntime wrote no profile");
    const events = JSON.parse(await Deno.readTextFile(`${dir}/${file.name}`)) as ProfileEvent[];
    return summarizeProfile(events, skip);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
