/**
 * @module Expert parallelism on the layer path: for one request's layer on the entry
 * backend, sends each routed expert's rows where the active placement plan puts them —
 * this backend's layer executable, a peer (one item per peer: each token once, with
 * all its assignments to that peer's experts), or, for an expert here but outside the
 * executable, the per-expert path (loaded on demand). One layer execution adds the
 * local experts and the shared experts, and computes the next gate.
 *
 * Overlap (`overlap`): overlapped, the local execution runs while the peers' rows are in
 * flight — as DeepSeek's serving overlaps communication with computation — and the
 * peers' results are added after it; the next gate, fused into the execution, then saw
 * the state without them, so the forward pass runs that gate on its own. Sequential,
 * the peers' results join the residual first and the fused gate is kept. `auto` overlaps
 * only when the executor would otherwise idle: under load, other
 * requests' executions fill the hop anyway, and the extra gate run costs throughput.
 * Each crossing layer reports its hop: wall time, the part the request waited on with
 * nothing of its own running (exposed), the peers' serving time, and the part during
 * which this backend's executor ran anything at all (covered).
 *
 * A peer that fails is skipped: its experts are routed again to their next replica.
 * With no reachable replica left, `onUnreachable: "load_local"` runs the rows here
 * (slower, never wrong), `"fail"` answers 503 naming the expert. The peer side is
 * `peer_item_runner.ts`.
 */
import { ApiError } from "../../shared/errors.ts";
import type { ModelManifest, ModelPart } from "../../shared/model_manifest.ts";
import type { BatchObserver } from "../batching/batch_queues.ts";
import { gatherRows } from "../moe/combine.ts";
import { type ExpertAssignment, groupRowsByExpert, type TokenRouting } from "../moe/routing.ts";
import { type PeerClient, PeerUnavailableError } from "../peer/peer_client.ts";
import type { DispatchCounters } from "../placement/expert_dispatcher.ts";
import type { PlacementState } from "../placement/placement_state.ts";
import { ReplicaPicker } from "../placement/replica_picker.ts";
import type { Assignments, LayerWork } from "./layer_batch.ts";
import {
  addContributions,
  type Contribution,
  LocalAssignments,
  peerItem,
} from "./layer_dispatch_parts.ts";
import type { LayerBatcher } from "./layer_batcher.ts";
import type { LayerExecutable, LayerExecutables } from "./layer_executables.ts";
import type { LayerObserver, LayerPath } from "./layer_path.ts";

/** Options of {@linkcode LayerDispatcher}. */
export interface LayerDispatcherOptions {
  selfId: string;
  manifest: ModelManifest;
  batcher: LayerBatcher;
  executables: LayerExecutables;
  placement: PlacementState;
  /** The per-expert path here (loads an expert on demand): for experts outside the executable. */
  runPart(part: ModelPart, input: Float32Array, rows: number): Promise<Float32Array>;
  peer: (id: string) => PeerClient | undefined;
  onUnreachable?: "load_local" | "fail";
  /** When local experts run while peers' rows are in flight (`backend.overlap_hops`); default never. */
  overlap?: OverlapMode;
  /** Clock (ms); default `performance.now`. */
  now?: () => number;
}

/** `backend.overlap_hops`. */
export type OverlapMode = "auto" | "always" | "never";

/** Counters of the layer path's dispatch. */
export interface LayerDispatchCounters extends DispatchCounters {
  /** Rows run here through the per-expert path (expert outside the executable). */
  onDemandRows: number;
  /** Request layers that crossed backends, and the unique rows they sent. */
  hops: number;
  hopRows: number;
  /**
   * Σ hop wall time (send → last answer), the exposed part of it, the peers' serving
   * time, and the part during which this backend's executor ran anything (ms).
   */
  hopWallMs: number;
  hopExposedMs: number;
  hopPeerMs: number;
  hopCoveredMs: number;
}

/** One dispatch of a layer's experts. */
interface DispatchJob {
  layer: number;
  executable: LayerExecutable;
  experts: readonly number[];
  groups: readonly ExpertAssignment[];
  weights: Float32Array;
  hidden: Float32Array;
  /** Rows of `hidden`. */
  rows: number;
  local: LocalAssignments;
  tried: Map<number, { backends: Set<string>; reasons: string[] }>;
}

/** Rows that left for peers and on-demand experts, and their results to come. */
/** A layer step whose rows went to peers too: what step 2 finishes. */
interface HopStep {
  executable: LayerExecutable;
  hidden: Float32Array;
  rows: number;
  local: LocalAssignments;
  outside: Routed;
  /** The peers' contributions, when they all answered, and the executor time meanwhile. */
  answered: Promise<{ contributions: Contribution[]; at: number; covered: number }>;
  observer: LayerObserver;
  sentAt: number;
}

interface Routed {
  waits: Promise<Contribution[]>[];
  /** Peers sent to, and the unique rows sent (first attempt). */
  peers: number;
  rows: number;
  /** The longest serving time a peer reported (known once the waits settled). */
  peerMs(): number;
}

type Destination =
  | { kind: "local" }
  | { kind: "on_demand" }
  | { kind: "peer"; id: string };

/** Dispatches layer work to the executable, peers and on-demand experts. */
export class LayerDispatcher implements LayerPath {
  readonly counters: LayerDispatchCounters = {
    localRows: 0,
    remoteRows: 0,
    retries: 0,
    unavailable: 0,
    fallbackRows: 0,
    onDemandRows: 0,
    hops: 0,
    hopRows: 0,
    hopWallMs: 0,
    hopExposedMs: 0,
    hopPeerMs: 0,
    hopCoveredMs: 0,
  };
  readonly #options: LayerDispatcherOptions;
  readonly #picker: ReplicaPicker;
  readonly #overlap: OverlapMode;
  readonly #now: () => number;

  constructor(options: LayerDispatcherOptions) {
    this.#options = options;
    this.#overlap = options.overlap ?? "never";
    this.#now = options.now ?? (() => performance.now());
    this.#picker = new ReplicaPicker({
      selfId: options.selfId,
      placement: options.placement,
      reachable: (backend) => options.peer(backend)?.available ?? false,
    });
  }

  gate(
    layer: number,
    input: Float32Array,
    rows: number,
    onBatch?: BatchObserver,
  ): Promise<Float32Array> {
    return this.#options.batcher.gate(layer, input, rows, onBatch);
  }

  async layer(
    layer: number,
    hidden: Float32Array,
    rows: number,
    routing: TokenRouting,
    observer: LayerObserver,
  ): Promise<{ hidden: Float32Array; logits: Float32Array | null }> {
    const { manifest, batcher, executables } = this.#options;
    const executable = executables.current(layer);
    executables.acquire(executable);
    try {
      const here = this.#allHere(layer, executable, routing, rows);
      if (here !== null) {
        const outcome = await batcher.run(
          executable,
          entryWork(hidden, rows, here),
          observer.onBatch,
        );
        return { hidden: outcome.hidden, logits: outcome.logits };
      }
      // Step 1: route every selected expert — local ones join this layer's work, the
      // others leave for their peers (and on-demand experts) now.
      const groups = groupRowsByExpert(routing, rows, manifest.top_k, manifest.experts);
      const local = new LocalAssignments();
      const overlap = this.#overlap === "always" || (this.#overlap === "auto" && batcher.idle());
      const sentAt = this.#now();
      const busyAt = batcher.busyClock();
      const outside = this.#dispatch({
        layer,
        executable,
        experts: groups.flatMap((group, expert) => group.rows.length > 0 ? [expert] : []),
        groups,
        weights: routing.weights,
        hidden,
        rows,
        local,
        tried: new Map(),
      });
      const pending = outside.waits.length > 0;
      if (!pending) {
        const work = entryWork(hidden, rows, local.build());
        const outcome = await batcher.run(executable, work, observer.onBatch);
        return { hidden: outcome.hidden, logits: outcome.logits };
      }
      const answered = Promise.all(outside.waits).then((parts) => ({
        contributions: parts.flat(),
        at: this.#now(),
        covered: batcher.busyClock() - busyAt,
      }));
      const step = { executable, hidden, rows, local, outside, answered, observer, sentAt };
      return overlap ? await this.#overlapped(step) : await this.#sequential(step);
    } finally {
      executables.release(executable);
    }
  }

  /** Step 2 (sequential): outside results join the residual; one execution adds the rest. */
  async #sequential(step: HopStep): Promise<{ hidden: Float32Array; logits: Float32Array | null }> {
    const { executable, hidden, rows, local, outside, observer, sentAt } = step;
    const { contributions, at, covered } = await step.answered;
    this.#recordHop(observer, outside, {
      sentAt,
      answeredAt: at,
      localDoneAt: sentAt,
      covered,
    });
    const residual = hidden.slice();
    addContributions(residual, this.#options.manifest.d_model, contributions);
    const work = entryWork(hidden, rows, local.build(), residual);
    const outcome = await this.#options.batcher.run(executable, work, observer.onBatch);
    return { hidden: outcome.hidden, logits: outcome.logits };
  }

  /**
   * Step 2 (overlapped): the local experts, shared experts and residual run while the
   * outside rows are in flight; their results are added after. The fused next gate saw
   * the hidden state without them, so it is dropped (the caller runs the gate alone).
   */
  async #overlapped(step: HopStep): Promise<{ hidden: Float32Array; logits: null }> {
    const { executable, hidden, rows, local, outside, observer, sentAt } = step;
    const work = entryWork(hidden, rows, local.build());
    const ran = this.#options.batcher.run(executable, work, observer.onBatch).then((outcome) => ({
      outcome,
      at: this.#now(),
    }));
    const [{ outcome, at: localAt }, { contributions, at, covered }] = await Promise.all([
      ran,
      step.answered,
    ]);
    this.#recordHop(observer, outside, { sentAt, answeredAt: at, localDoneAt: localAt, covered });
    const next = outcome.hidden;
    addContributions(next, this.#options.manifest.d_model, contributions);
    return { hidden: next, logits: null };
  }

  #recordHop(
    observer: LayerObserver,
    outside: Routed,
    times: { sentAt: number; answeredAt: number; localDoneAt: number; covered: number },
  ): void {
    if (outside.peers === 0) return;
    const { sentAt, answeredAt, localDoneAt } = times;
    const hop = {
      peers: outside.peers,
      rows: outside.rows,
      wallMs: answeredAt - sentAt,
      exposedMs: Math.max(answeredAt - Math.max(localDoneAt, sentAt), 0),
      peerMs: outside.peerMs(),
    };
    const counters = this.counters;
    counters.hops++;
    counters.hopRows += hop.rows;
    counters.hopWallMs += hop.wallMs;
    counters.hopExposedMs += hop.exposedMs;
    counters.hopPeerMs += hop.peerMs;
    counters.hopCoveredMs += Math.min(times.covered, hop.wallMs);
    observer.onHop?.(hop);
  }

  /**
   * The common case without any grouping: every selected expert runs in `executable` (no
   * plan, or the plan's replica here) — the assignments are the routing itself. Null
   * when some expert goes elsewhere.
   */
  #allHere(
    layer: number,
    executable: LayerExecutable,
    routing: TokenRouting,
    rows: number,
  ): Assignments | null {
    const { placement, selfId } = this.#options;
    const experts = routing.experts;
    const planned = placement.active !== null;
    for (let i = 0; i < experts.length; i++) {
      const expert = experts[i]!;
      if (executable.position[expert]! < 0) return null;
      if (
        planned &&
        !placement.replicas(layer, expert).some((r) => r.backend === selfId && r.weight > 0)
      ) return null;
    }
    const topK = experts.length / Math.max(rows, 1);
    this.counters.localRows += experts.length;
    const row = new Int32Array(experts.length);
    for (let i = 0; i < row.length; i++) row[i] = Math.floor(i / topK);
    return {
      row,
      expert: experts,
      weight: routing.weights,
    };
  }

  /**
   * Routes `experts`: local ones into `job.local` (synchronously), the others to their
   * peers or the on-demand path. A peer that fails has its experts routed again; rows
   * that then land here run as a work of their own (`job.local` may be running already).
   */
  #dispatch(job: DispatchJob): Routed {
    const { layer, executable, groups, weights, hidden, local, tried } = job;
    const width = this.#options.manifest.d_model;
    const waits: Promise<Contribution[]>[] = [];
    const byPeer = new Map<string, number[]>();
    for (const expert of job.experts) {
      const group = groups[expert]!;
      const rows = group.rows.length;
      const where = this.#destination(layer, expert, rows, executable, tried.get(expert));
      if (where.kind === "local") {
        local.add(expert, group, weights);
        this.counters.localRows += rows;
      } else if (where.kind === "on_demand") {
        this.counters.onDemandRows += rows;
        waits.push(
          this.#options.runPart(
            { kind: "expert", layer, expert },
            gatherRows(hidden, width, group.rows),
            rows,
          ).then((values) => [{
            rows: group.rows,
            values,
            weights: Float32Array.from(group.positions, (p) => weights[p]!),
          }]),
        );
      } else {
        byPeer.set(where.id, [...(byPeer.get(where.id) ?? []), expert]);
      }
    }
    let sentRows = 0;
    let peerMs = 0;
    for (const [id, experts] of byPeer) {
      const { data, tokens } = peerItem(layer, experts, groups, weights, hidden, width);
      sentRows += data.rows;
      const peer = this.#options.peer(id)!;
      waits.push(
        peer.runLayer(data).then(({ values, serveMs }) => {
          this.counters.remoteRows += data.assignRow.length;
          peerMs = Math.max(peerMs, serveMs);
          return [{ rows: tokens, values, weights: null }];
        }, (error) => {
          if (!(error instanceof PeerUnavailableError)) throw error;
          this.counters.retries++;
          for (const expert of experts) {
            const entry = tried.get(expert) ?? { backends: new Set(), reasons: [] };
            entry.backends.add(id);
            entry.reasons.push(error.message);
            tried.set(expert, entry);
          }
          return this.#redispatch({ ...job, experts });
        }),
      );
    }
    return { waits, peers: byPeer.size, rows: sentRows, peerMs: () => peerMs };
  }

  /** Routes a failed peer's experts again; rows that land here run as their own work. */
  async #redispatch(job: DispatchJob): Promise<Contribution[]> {
    const local = new LocalAssignments();
    const routed = this.#dispatch({ ...job, local });
    const here: Promise<Contribution[]> = local.size === 0
      ? Promise.resolve([])
      : this.#options.batcher.run(job.executable, {
        rows: job.hidden,
        rowCount: job.rows,
        entry: 0,
        residual: null,
        assign: local.build(),
      }).then((outcome) => [{
        rows: Int32Array.from({ length: job.rows }, (_, i) => i),
        values: outcome.routed,
        weights: null,
      }]);
    return (await Promise.all([here, ...routed.waits])).flat();
  }

  #destination(
    layer: number,
    expert: number,
    rows: number,
    executable: LayerExecutable,
    tried: { backends: Set<string>; reasons: string[] } | undefined,
  ): Destination {
    const here: Destination = executable.position[expert]! >= 0
      ? { kind: "local" }
      : { kind: "on_demand" };
    if (this.#options.placement.active === null) return here;
    const replica = this.#picker.pick(layer, expert, rows, tried?.backends ?? new Set());
    if (replica === null) {
      this.counters.unavailable++;
      if ((this.#options.onUnreachable ?? "load_local") === "load_local") {
        this.counters.fallbackRows += rows;
        return here;
      }
      throw new ApiError(
        "overloaded",
        `Cannot run inference: expert L${layer}/E${expert} has no reachable replica (${
          tried?.reasons.join("; ") || "none placed"
        })`,
        { retryAfterS: 1 },
      );
    }
    return replica.backend === this.#options.selfId ? here : { kind: "peer", id: replica.backend };
  }
}

/** An entry request's work: its `rows` rows, all entry tokens, with `assign` (and a residual). */
function entryWork(
  hidden: Float32Array,
  rows: number,
  assign: Assignments,
  residual: Float32Array | null = null,
): LayerWork {
  return { rows: hidden, rowCount: rows, entry: rows, residual, assign };
}
