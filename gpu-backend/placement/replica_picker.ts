/**
 * @module Which replica of a routed expert gets a request's rows, under the active
 * placement plan — shared by the per-expert and the layer dispatch paths.
 *
 * A replica on this backend first — the router already spreads entry traffic evenly, so
 * local replicas of an expert replicated everywhere share its rows in that proportion,
 * without a network hop and without halving its batches. (Letting live weights override
 * that moved rows across backends on every utilisation swing and cost 14 % throughput in
 * `bench:balance` on this machine.) Otherwise smooth weighted round-robin per (layer,
 * expert) over the remote replicas, weighted by the plan's replica weights and by rows,
 * so each receives its share of the rows (the planner's assumption), while one request's
 * group for an expert stays whole. Replicas already tried or unreachable are skipped.
 */
import type { Replica } from "../../shared/placement_plan.ts";
import type { PlacementState } from "./placement_state.ts";

/** Options of {@linkcode ReplicaPicker}. */
export interface ReplicaPickerOptions {
  selfId: string;
  placement: PlacementState;
  /** Whether a (remote) backend can be reached now. */
  reachable: (backend: string) => boolean;
}

/** Smooth weighted round-robin over an expert's replicas, local first. */
export class ReplicaPicker {
  readonly #options: ReplicaPickerOptions;
  #credits = new Map<string, number[]>();
  #planVersion = 0;

  constructor(options: ReplicaPickerOptions) {
    this.#options = options;
  }

  /** The replica for `rows` rows of (layer, expert), or null when none is left to try. */
  pick(layer: number, expert: number, rows: number, tried: ReadonlySet<string>): Replica | null {
    const { placement, selfId } = this.#options;
    const active = placement.active;
    if (active === null) return null;
    if (active.version !== this.#planVersion) {
      this.#credits.clear();
      this.#planVersion = active.version;
    }
    const replicas = placement.replicas(layer, expert);
    const key = `${layer}/${expert}`;
    let credits = this.#credits.get(key);
    if (!credits) {
      credits = replicas.map(() => 0);
      this.#credits.set(key, credits);
    }
    const local = replicas.find((r) => r.backend === selfId && r.weight > 0);
    if (local && !tried.has(local.backend)) return local;
    let best = -1;
    let total = 0;
    replicas.forEach((replica, i) => {
      if (tried.has(replica.backend) || !this.#reachable(replica.backend)) return;
      credits[i]! += replica.weight * rows;
      total += replica.weight * rows;
      if (best < 0 || credits[i]! > credits[best]!) best = i;
    });
    if (best < 0) return null;
    credits[best]! -= total;
    return replicas[best]!;
  }

  #reachable(backend: string): boolean {
    return backend === this.#options.selfId || this.#options.reachable(backend);
  }
}
