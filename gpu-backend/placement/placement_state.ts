/**
 * @module This backend's view of the placement plan: the active plan (what requests
 * use), a staged plan (loaded and warmed, waiting for the switch), per-expert replica
 * tables of the active plan, and residency of expert sessions.
 *
 * Switch protocol (driven by the router): `stage(plan)` loads and warms every expert
 * this backend hosts under the new plan while keeping the old ones; `activate(version)`
 * swaps the active plan in one assignment; `release(version)` unloads experts the
 * active plan no longer places here — at once if idle, else as soon as its last
 * running work finishes (work is counted per expert by {@linkcode PlacementState.use}),
 * so an unload never pulls a session from under a queued batch. Rows that arrive for
 * an expert that is not loaded (a peer still on the old plan) load it on demand —
 * slower, never wrong — and are counted as cold starts.
 */
import { ApiError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/logger.ts";
import { type ModelManifest, type ModelPart, modelPartKey } from "../../shared/model_manifest.ts";
import {
  hostedExperts,
  type PlacementPlan,
  planProblem,
  type Replica,
  replicasByExpert,
} from "../../shared/placement_plan.ts";
import type { ExpertExecutor } from "../execution/executor.ts";

/** Options of {@linkcode PlacementState}. */
export interface PlacementStateOptions {
  manifest: ModelManifest;
  backendId: string;
  executor: ExpertExecutor;
  logger: Logger;
}

/** Active/staged plans and expert residency of one backend. */
export class PlacementState {
  readonly #options: PlacementStateOptions;
  #active: PlacementPlan | null = null;
  #staged: PlacementPlan | null = null;
  #replicas: Replica[][][] = [];
  #loading = new Map<string, Promise<void>>();
  /** Work in progress per expert part key. */
  #inUse = new Map<string, number>();
  /** Parts to unload once their work drains. */
  #dropWhenIdle = new Map<string, ModelPart>();
  /** Experts loaded on demand because rows arrived before they were staged. */
  coldStarts = 0;

  constructor(options: PlacementStateOptions) {
    this.#options = options;
  }

  /** The plan requests use now, or null (no placement: every expert runs locally). */
  get active(): PlacementPlan | null {
    return this.#active;
  }

  /** The staged plan, or null. */
  get staged(): PlacementPlan | null {
    return this.#staged;
  }

  /** Replicas of a logical expert under the active plan ([] without a plan). */
  replicas(layer: number, expert: number): readonly Replica[] {
    return this.#replicas[layer]?.[expert] ?? [];
  }

  /** Loads and warms the experts this backend hosts under `plan`; returns what was loaded. */
  async stage(plan: PlacementPlan): Promise<{ loaded: string[]; ms: number }> {
    const { manifest, backendId, executor } = this.#options;
    const problem = planProblem(plan, {
      name: manifest.name,
      layers: manifest.layers,
      experts: manifest.experts,
    });
    if (problem) throw new ApiError("bad_request", `Cannot stage plan: ${problem}`);
    const started = performance.now();
    const needed = hostedExperts(plan, backendId).flatMap((experts, layer) =>
      experts.map((expert): ModelPart => ({ kind: "expert", layer, expert }))
    );
    const missing = needed.filter((part) => executor.isLoaded?.(part) === false);
    await this.#load(missing);
    this.#staged = plan;
    this.#options.logger.info("plan staged", {
      version: plan.version,
      loaded: missing.length,
      ms: Math.round(performance.now() - started),
    });
    return { loaded: missing.map(modelPartKey), ms: performance.now() - started };
  }

  /** Switches to the staged plan `version`. */
  activate(version: number): void {
    const staged = this.#staged;
    if (!staged || staged.version !== version) {
      throw new ApiError(
        "conflict",
        `Cannot activate plan ${version}: staged is ${staged ? staged.version : "none"}`,
      );
    }
    const { manifest } = this.#options;
    this.#replicas = staged.layers.map((_, layer) =>
      replicasByExpert(staged, layer, manifest.experts)
    );
    this.#active = staged;
    this.#options.logger.info("plan activated", { version, reason: staged.reason });
  }

  /** Replaces the replica weights of the active plan `version` (live load feedback). */
  setWeights(version: number, weights: number[][]): void {
    const active = this.#active;
    if (!active || active.version !== version) {
      throw new ApiError(
        "conflict",
        `Cannot set replica weights for plan ${version}: active is ${
          active ? active.version : "none"
        }`,
      );
    }
    const slots = active.backends.length * active.slotsPerBackend;
    if (
      weights.length !== active.layers.length || weights.some((layer) => layer.length !== slots)
    ) {
      throw new ApiError(
        "bad_request",
        `Cannot set replica weights: expected ${active.layers.length} layers × ${slots} slots`,
      );
    }
    const weighted: PlacementPlan = {
      ...active,
      layers: active.layers.map((layer, i) => ({ ...layer, replicaWeights: weights[i]! })),
    };
    this.#replicas = weighted.layers.map((_, layer) =>
      replicasByExpert(weighted, layer, this.#options.manifest.experts)
    );
    this.#active = weighted;
  }

  /** Unloads experts that the active plan `version` does not place on this backend. */
  async release(version: number): Promise<string[]> {
    const active = this.#active;
    if (!active || active.version !== version) {
      throw new ApiError(
        "conflict",
        `Cannot release for plan ${version}: active is ${active ? active.version : "none"}`,
      );
    }
    const { manifest, backendId, executor } = this.#options;
    if (!executor.unload || !executor.isLoaded) return [];
    const keep = hostedExperts(active, backendId);
    const stagedKeep = this.#staged && this.#staged.version !== version
      ? hostedExperts(this.#staged, backendId)
      : null;
    const drop: ModelPart[] = [];
    for (let layer = 0; layer < manifest.layers; layer++) {
      for (let expert = 0; expert < manifest.experts; expert++) {
        const part: ModelPart = { kind: "expert", layer, expert };
        const kept = keep[layer]!.includes(expert) ||
          (stagedKeep?.[layer]?.includes(expert) ?? false);
        if (kept || !executor.isLoaded(part)) continue;
        if ((this.#inUse.get(modelPartKey(part)) ?? 0) > 0) {
          this.#dropWhenIdle.set(modelPartKey(part), part);
        } else {
          drop.push(part);
        }
      }
    }
    await executor.unload(drop);
    this.#options.logger.info("plan released", {
      version,
      unloaded: drop.length,
      deferred: this.#dropWhenIdle.size,
    });
    return drop.map(modelPartKey);
  }

  /** Runs `work` on a part, loading it first if needed; an unload waits for it. */
  use<T>(part: ModelPart, work: () => Promise<T>): Promise<T> {
    // Gates and shared experts are never unloaded: nothing to count.
    if (part.kind !== "expert") return work();
    const key = modelPartKey(part);
    this.#inUse.set(key, (this.#inUse.get(key) ?? 0) + 1);
    this.#dropWhenIdle.delete(key);
    const loaded = this.#options.executor.isLoaded?.(part) !== false;
    const running = loaded ? work() : this.ensureLoaded(part).then(work);
    return running.finally(() => this.#done(key));
  }

  #done(key: string): void {
    const left = this.#inUse.get(key)! - 1;
    if (left > 0) {
      this.#inUse.set(key, left);
      return;
    }
    this.#inUse.delete(key);
    const deferred = this.#dropWhenIdle.get(key);
    if (deferred && !this.#hostedByPlans(deferred)) {
      this.#dropWhenIdle.delete(key);
      void this.#options.executor.unload?.([deferred]);
    }
  }

  #hostedByPlans(part: ModelPart): boolean {
    if (part.kind !== "expert") return true;
    const { backendId } = this.#options;
    return [this.#active, this.#staged].some((plan) =>
      plan !== null && hostedExperts(plan, backendId)[part.layer]!.includes(part.expert)
    );
  }

  /** Makes sure a part can run here, loading it on demand (a cold start) if needed. */
  async ensureLoaded(part: ModelPart): Promise<void> {
    if (this.#options.executor.isLoaded?.(part) !== false) return;
    this.coldStarts++;
    await this.#load([part]);
  }

  async #load(parts: ModelPart[]): Promise<void> {
    const { executor, manifest } = this.#options;
    if (!executor.load || parts.length === 0) return;
    // One load per part at a time, even when many requests need it at once.
    const fresh = parts.filter((part) => !this.#loading.has(modelPartKey(part)));
    if (fresh.length > 0) {
      const loading = executor.load(fresh).then(() =>
        // Warm-up: one row through each new session, so the first request pays nothing.
        Promise.all(
          fresh.map((part) => executor.execute(part, new Float32Array(manifest.d_model), 1)),
        )
      ).then(() => {}).finally(() => {
        for (const part of fresh) this.#loading.delete(modelPartKey(part));
      });
      for (const part of fresh) this.#loading.set(modelPartKey(part), loading);
    }
    await Promise.all(parts.map((part) => this.#loading.get(modelPartKey(part))));
  }
}
