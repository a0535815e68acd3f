/**
 * @module Micro-batching per layer: one queue per layer (`L{l}/layer`) and one for the
 * first layer's gate (`L0/gate`), coalescing the works of concurrent requests and peers
 * into one `session.run()` each (`batch_queues.ts` decides when).
 *
 * Among ready queues the deepest layer goes first (a gate before its layer): requests
 * already in flight finish before new ones start, so the requests of a wave move
 * through the layers together and every layer's batch holds all of them — measured
 * here, larger batches than serving the oldest head first, where the stages took turns
 * and split the in-flight requests between them. A new request waits at most for the
 * waves ahead of it to leave the layers they are in.
 *
 * It also keeps the per-part counters the load report and `/metrics` show, from row
 * counts: every execution adds its rows per hosted expert, its entry rows to the shared
 * experts (and to the next layer's fused gate), and splits its time over them by
 * arithmetic (a routed or shared row = one expert MLP; a gate row = `E / (2·d_ff)` of
 * one) — so per-expert tokens are rows, never executions.
 */
import type { ModelManifest } from "../../shared/model_manifest.ts";
import {
  type BatchKernel,
  type BatchObserver,
  BatchQueues,
  type KernelRun,
  type QueueBatchStats,
} from "../batching/batch_queues.ts";
import type { BatchPolicy } from "../batching/policies.ts";
import type { GraphRunner } from "../execution/graph_runner.ts";
import { ONNX_INPUT_NAME, ONNX_OUTPUT_NAME } from "../../shared/model_manifest.ts";
import { assembleLayerBatch, type LayerOutcome, type LayerWork } from "./layer_batch.ts";
import type { LayerExecutable, LayerExecutables } from "./layer_executables.ts";
import { LayerCounters, type LayerWaves } from "./layer_counters.ts";

/** A group of a layer queue: a work and the executable it was routed for. */
type LayerGroup =
  | { kind: "layer"; executable: LayerExecutable; work: LayerWork }
  | { kind: "gate"; layer: number; input: Float32Array; rows: number };

type GroupResult = LayerOutcome | Float32Array;

/** Options of {@linkcode LayerBatcher}. */
export interface LayerBatcherOptions {
  runner: GraphRunner;
  executables: LayerExecutables;
  manifest: ModelManifest;
  policy: BatchPolicy;
  maxRowsPerBatch?: number;
  priorService?: { fixedMs: number; perRowMs: number };
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => number;
  clearTimer?: (id: number) => void;
}

/** Queues and runs layer works and stand-alone gates. */
export class LayerBatcher {
  readonly counters: LayerCounters;
  readonly #queues: BatchQueues<LayerGroup, GroupResult>;

  constructor(options: LayerBatcherOptions) {
    const { runner, executables, manifest } = options;
    this.counters = new LayerCounters(manifest);
    const kernel = layerKernel(runner, executables, manifest, this.counters);
    this.#queues = new BatchQueues<LayerGroup, GroupResult>({
      kernel,
      policy: options.policy,
      priority: queuePriority,
      // New requests enter at layer 0's gate; peers' rows and later layers never wait to fill.
      entry: (key) => key === "L0/gate",
      ...(options.maxRowsPerBatch !== undefined
        ? { maxRowsPerBatch: options.maxRowsPerBatch }
        : {}),
      ...(options.priorService ? { priorService: options.priorService } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.setTimer ? { setTimer: options.setTimer } : {}),
      ...(options.clearTimer ? { clearTimer: options.clearTimer } : {}),
    });
  }

  /** The policy in use. */
  get policy(): BatchPolicy {
    return this.#queues.policy;
  }

  /** Runs a layer's stand-alone gate on `rows` rows: logits `[rows, experts]`. */
  async gate(
    layer: number,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array> {
    return await this.#queues.submit(
      `L${layer}/gate`,
      { kind: "gate", layer, input, rows },
      rows,
      onBatch,
    ) as Float32Array;
  }

  /**
   * Runs `work` on `executable` (which the caller holds: `LayerExecutables.acquire`
   * before routing the work's rows for it, `release` after this resolves).
   */
  async run(
    executable: LayerExecutable,
    work: LayerWork,
    onBatch?: BatchObserver,
  ): Promise<LayerOutcome> {
    return await this.#queues.submit(
      `L${executable.layer}/layer`,
      { kind: "layer", executable, work },
      work.rowCount,
      onBatch,
    ) as LayerOutcome;
  }

  /** Per-part statistics from row counts (see `layer_counters.ts`). */
  partStats(): QueueBatchStats[] {
    const queued = new Map(this.#queues.stats().map((q) => [q.part, q.queuedGroups]));
    return this.counters.stats((layer) =>
      (queued.get(`L${layer}/layer`) ?? 0) + (queued.get(`L${layer}/gate`) ?? 0)
    );
  }

  /** Per layer: how full its executions ran (see `layer_counters.ts`). */
  waves(): LayerWaves[] {
    return this.counters.waves();
  }

  /** Queue statistics (`L{l}/gate`, `L{l}/layer`). */
  stats(): QueueBatchStats[] {
    return this.#queues.stats();
  }

  /** Measured host-thread milliseconds per execution. */
  hostMsPerExecution(): number {
    return this.#queues.hostMsPerExecution();
  }

  /** Σ ms during which at least one execution ran (diff two readings). */
  busyClock(): number {
    return this.#queues.busyClock();
  }

  /** Whether new work would start at once (nothing queued, an execution place free). */
  idle(): boolean {
    return this.#queues.idle();
  }

  /** Current batching window (ms) of the policy. */
  windowMs(): number {
    return this.#queues.windowMs();
  }
}

/** Deeper layers first; a layer's gate just before the layer. */
function queuePriority(key: string): number {
  const match = /^L(\d+)\/(gate|layer)$/.exec(key);
  return match ? 2 * Number(match[1]) + (match[2] === "layer" ? 1 : 0) : 0;
}

function layerKernel(
  runner: GraphRunner,
  executables: LayerExecutables,
  manifest: ModelManifest,
  counters: LayerCounters,
): BatchKernel<LayerGroup, GroupResult> {
  const width = manifest.d_model;
  return {
    slots: runner.slots,
    depth: runner.depth,
    sharedThread: runner.sharedThread,
    execute(_key, groups, rows) {
      const first = groups[0]!;
      if (first.kind === "gate") {
        return runGate(
          runner,
          executables,
          counters,
          groups as Extract<LayerGroup, { kind: "gate" }>[],
          rows,
          width,
        );
      }
      return runLayer(runner, counters, groups as Extract<LayerGroup, { kind: "layer" }>[], width);
    },
  };
}

async function runGate(
  runner: GraphRunner,
  executables: LayerExecutables,
  counters: LayerCounters,
  groups: Extract<LayerGroup, { kind: "gate" }>[],
  rows: number,
  width: number,
): Promise<KernelRun<GroupResult>> {
  const layer = groups[0]!.layer;
  let input = groups[0]!.input;
  if (groups.length > 1) {
    input = new Float32Array(rows * width);
    let offset = 0;
    for (const group of groups) {
      input.set(group.input, offset);
      offset += group.input.length;
    }
  }
  const { outputs, ms } = await runner.run(
    executables.gateKey(layer),
    { [ONNX_INPUT_NAME]: { type: "float32", data: input, dims: [rows, width] } },
    [ONNX_OUTPUT_NAME],
    rows,
  );
  counters.gate(layer, rows, ms);
  const logits = outputs[ONNX_OUTPUT_NAME]!;
  return {
    ms,
    split: () => {
      const experts = rows > 0 ? logits.length / rows : 0;
      let offset = 0;
      return groups.map((group) => {
        const part = logits.subarray(offset * experts, (offset + group.rows) * experts);
        offset += group.rows;
        return part;
      });
    },
  };
}

/** Runs the groups on their executables (one run each; normally all share one). */
async function runLayer(
  runner: GraphRunner,
  counters: LayerCounters,
  groups: Extract<LayerGroup, { kind: "layer" }>[],
  width: number,
): Promise<KernelRun<GroupResult>> {
  const byExecutable = new Map<LayerExecutable, number[]>();
  groups.forEach((group, i) => {
    const list = byExecutable.get(group.executable) ?? [];
    list.push(i);
    byExecutable.set(group.executable, list);
  });
  const results = new Array<GroupResult>(groups.length);
  let ms = 0;
  const runs = [...byExecutable].map(async ([executable, indices]) => {
    const batch = assembleLayerBatch(indices.map((i) => groups[i]!.work), {
      width,
      position: executable.position,
      hosted: executable.experts.length,
      fusedGate: executable.fusedGate,
    });
    const run = await runner.run(executable.key, batch.feeds, batch.outputs, batch.totalRows);
    ms += run.ms;
    counters.layer(executable, batch.counts, batch.entryRows, run.ms, batch.totalRows);
    batch.split(run.outputs).forEach((outcome, j) => results[indices[j]!] = outcome);
  });
  await Promise.all(runs);
  return { ms, split: () => results };
}
