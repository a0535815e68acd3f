/**
 * @module Per-part micro-batching in front of an executor (the per-expert path).
 *
 * Every model part (gate, routed expert, shared expert) has a queue of request groups
 * (the rows one request sends to that part); `batch_queues.ts` coalesces them. The
 * kernel concatenates the groups' rows, runs the part once and splits the output rows
 * back per group.
 */
import { type ModelPart, modelPartKey } from "../../shared/model_manifest.ts";
import type { ExpertExecutor } from "../execution/executor.ts";
import type { PartRunner } from "./part_runner.ts";
import {
  type BatchKernel,
  type BatchObserver,
  BatchQueues,
  type BatchQueuesOptions,
  type QueueBatchStats,
} from "./batch_queues.ts";
import type { BatchPolicy } from "./policies.ts";

/** Options of {@linkcode MicroBatcher}. */
export type MicroBatcherOptions = Omit<BatchQueuesOptions<PartGroup, Float32Array>, "kernel"> & {
  executor: ExpertExecutor;
};

/** Per-part batching statistics. */
export type PartBatchStats = QueueBatchStats;

interface PartGroup {
  part: ModelPart;
  input: Float32Array;
  rows: number;
}

/** Concatenates groups' rows, runs the part once, splits the output per group. */
function partKernel(executor: ExpertExecutor): BatchKernel<PartGroup, Float32Array> {
  return {
    slots: executor.slots,
    depth: executor.depth,
    sharedThread: executor.sharedThread ?? false,
    async execute(_key, groups, rows) {
      let input: Float32Array;
      if (groups.length === 1) {
        input = groups[0]!.input;
      } else {
        input = new Float32Array(groups.reduce((sum, group) => sum + group.input.length, 0));
        let offset = 0;
        for (const group of groups) {
          input.set(group.input, offset);
          offset += group.input.length;
        }
      }
      const { output, ms } = await executor.execute(groups[0]!.part, input, rows);
      return {
        ms,
        split: () => {
          const width = rows > 0 ? output.length / rows : 0;
          let offset = 0;
          return groups.map((group) => {
            const part = output.subarray(offset * width, (offset + group.rows) * width);
            offset += group.rows;
            return part;
          });
        },
      };
    },
  };
}

/** Coalesces concurrent work per model part into micro-batches. */
export class MicroBatcher implements PartRunner {
  readonly #queues: BatchQueues<PartGroup, Float32Array>;

  constructor(options: MicroBatcherOptions) {
    const { executor, ...rest } = options;
    this.#queues = new BatchQueues({ ...rest, kernel: partKernel(executor) });
  }

  /** The policy in use. */
  get policy(): BatchPolicy {
    return this.#queues.policy;
  }

  run(
    part: ModelPart,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array> {
    return this.#queues.submit(modelPartKey(part), { part, input, rows }, rows, onBatch);
  }

  /** Statistics of every part seen so far. */
  stats(): PartBatchStats[] {
    return this.#queues.stats();
  }

  /** Measured host-thread milliseconds per execution. */
  hostMsPerExecution(): number {
    return this.#queues.hostMsPerExecution();
  }

  /** Current batching window (ms) of the policy. */
  windowMs(): number {
    return this.#queues.windowMs();
  }
}
