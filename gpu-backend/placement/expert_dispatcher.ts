/**
 * @module Expert parallelism on the entry backend, per-expert path: sends each routed
 * expert's rows to one of that expert's replicas under the active placement plan — this
 * backend's own micro-batcher, or a peer over its expert channel (replica choice:
 * `replica_picker.ts`). Rows already sent to a peer that dies are re-sent to the next
 * replica. With no reachable replica left, `onUnreachable: "load_local"` runs the rows
 * here after loading the expert on demand (every backend has the model files: slower,
 * never wrong), and `"fail"` answers 503 naming the expert.
 */
import { ApiError } from "../../shared/errors.ts";
import type { ModelPart } from "../../shared/model_manifest.ts";
import type { BatchObserver } from "../batching/batch_queues.ts";
import type { PartRunner } from "../batching/part_runner.ts";
import { type PeerClient, PeerUnavailableError } from "../peer/peer_client.ts";
import type { PlacementState } from "./placement_state.ts";
import { ReplicaPicker } from "./replica_picker.ts";

/** Options of {@linkcode ExpertDispatcher}. */
export interface ExpertDispatcherOptions {
  selfId: string;
  /** This backend's micro-batcher. */
  local: PartRunner;
  placement: PlacementState;
  /** The channel to a peer backend, by id. */
  peer: (id: string) => PeerClient | undefined;
  /** What to do when no replica is reachable (default `load_local`). */
  onUnreachable?: "load_local" | "fail";
}

/** Rows routed per destination, for load accounting. */
export interface DispatchCounters {
  localRows: number;
  remoteRows: number;
  retries: number;
  unavailable: number;
  /** Rows run here because no replica was reachable. */
  fallbackRows: number;
}

/** Routes expert work to local or remote replicas. */
export class ExpertDispatcher implements PartRunner {
  readonly counters: DispatchCounters = {
    localRows: 0,
    remoteRows: 0,
    retries: 0,
    unavailable: 0,
    fallbackRows: 0,
  };
  readonly #options: ExpertDispatcherOptions;
  readonly #picker: ReplicaPicker;

  constructor(options: ExpertDispatcherOptions) {
    this.#options = options;
    this.#picker = new ReplicaPicker({
      selfId: options.selfId,
      placement: options.placement,
      reachable: (backend) => options.peer(backend)?.available ?? false,
    });
  }

  /** Runs rows of a part hosted here (also the entry point for peers' rows). */
  runLocal(
    part: ModelPart,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array> {
    return this.#options.placement.use(
      part,
      () => this.#options.local.run(part, input, rows, onBatch),
    );
  }

  /** Runs rows on a replica; `onBatch` hears only local executions (peers report none). */
  async run(
    part: ModelPart,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array> {
    const { placement } = this.#options;
    if (part.kind !== "expert" || placement.active === null) {
      this.counters.localRows += rows;
      return await this.runLocal(part, input, rows, onBatch);
    }
    const tried = new Set<string>();
    const reasons: string[] = [];
    while (true) {
      const replica = this.#picker.pick(part.layer, part.expert, rows, tried);
      if (!replica) {
        this.counters.unavailable++;
        if ((this.#options.onUnreachable ?? "load_local") === "load_local") {
          this.counters.fallbackRows += rows;
          return await this.runLocal(part, input, rows, onBatch);
        }
        throw new ApiError(
          "overloaded",
          `Cannot run inference: expert L${part.layer}/E${part.expert} has no reachable replica (${
            reasons.join("; ") || "none placed"
          })`,
          { retryAfterS: 1 },
        );
      }
      if (replica.backend === this.#options.selfId) {
        this.counters.localRows += rows;
        return await this.runLocal(part, input, rows, onBatch);
      }
      const peer = this.#options.peer(replica.backend)!;
      try {
        // Keep our copy: the rows may have to go to another replica.
        const output = await peer.run(part.layer, part.expert, input.slice(), rows);
        this.counters.remoteRows += rows;
        return output;
      } catch (error) {
        if (!(error instanceof PeerUnavailableError)) throw error;
        tried.add(replica.backend);
        reasons.push(error.message);
        this.counters.retries++;
      }
    }
  }
}
