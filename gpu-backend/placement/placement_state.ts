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
 *
 * Residency (`gpu-backend/residency/`): under a memory budget, routed experts stay warm
 * up to that many bytes; a load first evicts least-recently-used experts that are not
 * pinned (hosted here by the active or staged plan) and not busy (work queued, running or
 * loading). Pinned or busy experts may hold usage above the budget until they drain.
 * With a budget, `release` leaves unplaced experts warm for the LRU to evict when room is
 * needed, instead of unloading them all. Gates and shared experts are always resident
 * and not counted.
 *
 * Layer executables (`layers`, the layer path): staging a plan builds the composed
 * executables for the experts it hosts here instead of loading per-expert sessions,
 * activation swaps them with the plan, and experts in an executable count as warm and
 * pinned (they leave it only when a plan replaces it). The per-expert sessions remain
 * for experts run outside the executable (loaded on demand).
 */
import type { ResidencyStatus, WarmAnswer } from "../../shared/residency_api.ts";
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
import { chooseEvictions, planWarm, type Resident } from "../residency/eviction_policy.ts";
import { estimatedExpertBytes } from "../residency/expert_bytes.ts";
import { type ColdStartStats, ExpertResidency } from "../residency/expert_residency.ts";
import { PlanOwnerGate } from "./plan_owner_gate.ts";

/** The layer executables as placement sees them (`gpu-backend/layer/layer_executables.ts`). */
export interface ComposedLayers {
  /** Builds executables hosting `hosted[layer]` for plan `version`; resolves the ms it took. */
  stage(version: number, hosted: readonly (readonly number[])[]): Promise<number>;
  /** Makes `version`'s executables current; false when they are not staged. */
  activate(version: number): boolean;
  /** Whether the current or staged executable of `layer` holds `expert`. */
  holds(layer: number, expert: number): boolean;
}

/** Options of {@linkcode PlacementState}. */
export interface PlacementStateOptions {
  manifest: ModelManifest;
  backendId: string;
  /** Per-expert sessions (all routed experts on the per-expert path; on-demand ones on the layer path). */
  executor: ExpertExecutor;
  logger: Logger;
  /** Budget, sizes and counters of warm experts; default unlimited, manifest sizes. */
  residency?: ExpertResidency;
  /** Layer executables (layer path), already started; absent on the per-expert path. */
  layers?: ComposedLayers;
}

/** Active/staged plans and expert residency of one backend. */
export class PlacementState {
  readonly #options: PlacementStateOptions;
  #active: PlacementPlan | null = null;
  #staged: PlacementPlan | null = null;
  #replicas: Replica[][][] = [];
  #loading = new Map<string, Promise<void>>();
  /** The parts being loaded, by key. */
  #loadingParts = new Map<string, ModelPart>();
  /** Work in progress per expert part key. */
  #inUse = new Map<string, number>();
  /** Parts to unload once their work drains. */
  #dropWhenIdle = new Map<string, ModelPart>();
  /** Experts loaded on demand because rows arrived before they were staged. */
  coldStarts = 0;
  readonly residency: ExpertResidency;
  /** Whom plan calls must come from (pool id and leader term): the plan routes check it. */
  readonly owner: PlanOwnerGate;
  /** Keys of experts hosted here by the active or staged plan (or one being staged). */
  #pinned = new Set<string>();
  #warnedOverBudget = false;

  constructor(options: PlacementStateOptions) {
    this.#options = options;
    this.owner = new PlanOwnerGate(options.logger);
    const { manifest, executor } = options;
    const bytes = estimatedExpertBytes(manifest);
    this.residency = options.residency ?? new ExpertResidency({ bytes: () => bytes });
    for (let layer = 0; layer < manifest.layers; layer++) {
      for (let expert = 0; expert < manifest.experts; expert++) {
        const part: ModelPart = { kind: "expert", layer, expert };
        if (executor.isLoaded?.(part) !== false || options.layers?.holds(layer, expert)) {
          this.residency.warmed(modelPartKey(part), layer, expert);
        }
      }
    }
    this.#updatePins();
  }

  /** Whether an expert's weights are here: a per-expert session or a layer executable. */
  #warmHere(part: ModelPart & { kind: "expert" }): boolean {
    return this.#options.executor.isLoaded?.(part) !== false ||
      (this.#options.layers?.holds(part.layer, part.expert) ?? false);
  }

  /** Brings the residency book in line with what is held (layer executables change). */
  #syncComposed(): void {
    if (!this.#options.layers) return;
    const { manifest } = this.#options;
    for (let layer = 0; layer < manifest.layers; layer++) {
      for (let expert = 0; expert < manifest.experts; expert++) {
        const part = { kind: "expert" as const, layer, expert };
        const key = modelPartKey(part);
        const here = this.#warmHere(part);
        if (here && !this.residency.isWarm(key)) this.residency.warmed(key, layer, expert);
        if (!here && this.residency.isWarm(key)) this.residency.evicted(key);
      }
    }
  }

  /** The model whose experts this places. */
  get manifest(): ModelManifest {
    return this.#options.manifest;
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
  async stage(
    plan: PlacementPlan,
  ): Promise<{ loaded: string[]; ms: number; layersMs?: number }> {
    const { manifest, backendId } = this.#options;
    const problem = planProblem(plan, {
      name: manifest.name,
      layers: manifest.layers,
      experts: manifest.experts,
    });
    if (problem) throw new ApiError("bad_request", `Cannot stage plan: ${problem}`);
    const started = performance.now();
    const hosted = hostedExperts(plan, backendId);
    // Layer path: compose the plan's executables (the current ones keep serving).
    const layersMs = await this.#options.layers?.stage(plan.version, hosted);
    this.#syncComposed();
    const needed = hosted.flatMap((experts, layer) =>
      experts.map((expert) => ({ kind: "expert" as const, layer, expert }))
    );
    const missing = needed.filter((part) => !this.#warmHere(part));
    // The plan's experts are pinned while they load, so making room never evicts them.
    this.#updatePins(plan);
    try {
      await this.#load(missing);
    } finally {
      this.#updatePins();
    }
    this.#staged = plan;
    this.#updatePins();
    await this.#enforceBudget();
    this.#options.logger.info("plan staged", {
      version: plan.version,
      loaded: missing.length,
      ms: Math.round(performance.now() - started),
      ...(layersMs !== undefined ? { layers_ms: Math.round(layersMs) } : {}),
    });
    return {
      loaded: missing.map(modelPartKey),
      ms: performance.now() - started,
      ...(layersMs !== undefined ? { layersMs } : {}),
    };
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
    this.#options.layers?.activate(version);
    this.#active = staged;
    this.#syncComposed();
    this.#updatePins();
    this.#enforceSoon();
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
    this.#syncComposed();
    if (!executor.unload || !executor.isLoaded) return [];
    if (this.residency.budgetBytes !== null) {
      // Under a budget, unplaced experts stay warm until the LRU needs their room.
      const evicted = await this.#enforceBudget();
      this.#options.logger.info("plan released", { version, unloaded: evicted.length });
      return evicted;
    }
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
    await this.#unload(drop);
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
    this.residency.touch(key);
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
      void this.#unload([deferred]);
    }
    // Over budget while this unpinned expert was busy: evict now that it is idle.
    if (this.residency.overBudget && !this.#pinned.has(key)) this.#enforceSoon();
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
    const key = modelPartKey(part);
    // One cold start per load: requests that join a load already under way wait for
    // it but do not count again.
    const starts = !this.#loading.has(key);
    const started = this.residency.now();
    await this.#load([part]);
    if (starts) {
      this.coldStarts++;
      this.residency.recordColdStart(key, this.residency.now() - started);
    }
  }

  /**
   * Loads and warms routed experts in priority order within the budget, evicting least
   * recently used unpinned idle experts as needed; what does not fit is skipped. Gates
   * and shared experts are always resident (`already_warm`).
   */
  async warm(parts: readonly ModelPart[]): Promise<WarmAnswer> {
    const alwaysResident = parts.filter((part) => part.kind !== "expert").map(modelPartKey);
    const experts = parts.filter((part) => part.kind === "expert");
    const byKey = new Map(experts.map((part) => [modelPartKey(part), part]));
    const plan = planWarm(
      experts.map((part) => ({
        key: modelPartKey(part),
        bytes: this.residency.bytesOf(part.layer, part.expert),
      })),
      this.#residents(),
      this.residency.budgetBytes,
    );
    // Free the memory first, then load.
    await this.#unload(plan.evict.map((key) => this.#partOf(key)));
    await this.#load(plan.load.map((key) => byKey.get(key)!));
    // The most wanted become the most recently used, so they are evicted last.
    for (const key of [...plan.alreadyWarm, ...plan.load].reverse()) this.residency.touch(key);
    return {
      warmed: plan.load,
      already_warm: [...alwaysResident, ...plan.alreadyWarm],
      evicted: plan.evict,
      skipped: plan.skipped,
    };
  }

  /** Budget, warm experts (least recently used first) and cold starts per expert. */
  residencyReport(): ResidencyStatus {
    const now = this.residency.now();
    return {
      budget_bytes: this.residency.budgetBytes,
      used_bytes: this.residency.usedBytes,
      warm: this.residency.residents((key) => ({ pinned: this.#pinned.has(key), busy: false }))
        .map((r) => ({
          part: r.key,
          bytes: r.bytes,
          last_used_ms_ago: Math.max(0, Math.round(now - r.lastUsedAt)),
          pinned: r.pinned,
        })),
      cold_starts: this.coldStartReport(),
    };
  }

  /** Cold starts per expert key: `{count, ms_sum, ms_max}` (ms rounded to 0.01). */
  coldStartReport(): ResidencyStatus["cold_starts"] {
    const round = (ms: number) => Math.round(ms * 100) / 100;
    const report: ResidencyStatus["cold_starts"] = {};
    for (const [key, stats] of this.residency.coldStarts()) {
      report[key] = { count: stats.count, ms_sum: round(stats.msSum), ms_max: round(stats.msMax) };
    }
    return report;
  }

  /** Cold starts of one part (routed experts only). */
  coldStartsOf(key: string): Readonly<ColdStartStats> | undefined {
    return this.residency.coldStarts().get(key);
  }

  /** Warm experts and experts loading now (busy), for the eviction policy. */
  #residents(): Resident[] {
    const residents = this.residency.residents((key) => ({
      pinned: this.#pinned.has(key),
      busy: (this.#inUse.get(key) ?? 0) > 0 || this.#loading.has(key),
    }));
    for (const [key, part] of this.#loadingParts) {
      if (part.kind !== "expert" || this.residency.isWarm(key)) continue;
      const bytes = this.residency.bytesOf(part.layer, part.expert);
      residents.push({ key, bytes, lastUsedAt: Infinity, pinned: false, busy: true });
    }
    return residents;
  }

  #partOf(key: string): ModelPart {
    const match = /^L(\d+)\/E(\d+)$/.exec(key);
    if (!match) throw new TypeError(`Cannot parse expert key "${key}"`);
    return { kind: "expert", layer: Number(match[1]), expert: Number(match[2]) };
  }

  #updatePins(staging?: PlacementPlan): void {
    const { backendId, layers, manifest } = this.#options;
    const pinned = new Set<string>();
    // Experts inside a layer executable leave it only when a plan replaces it.
    for (let layer = 0; layers && layer < manifest.layers; layer++) {
      for (let expert = 0; expert < manifest.experts; expert++) {
        if (layers.holds(layer, expert)) pinned.add(`L${layer}/E${expert}`);
      }
    }
    for (const plan of [this.#active, this.#staged, staging ?? null]) {
      if (plan === null) continue;
      hostedExperts(plan, backendId).forEach((experts, layer) => {
        for (const expert of experts) pinned.add(`L${layer}/E${expert}`);
      });
    }
    this.#pinned = pinned;
  }

  /** Evicts LRU unpinned idle experts until the budget holds (or nothing else may go). */
  async #enforceBudget(): Promise<string[]> {
    if (!this.#options.executor.unload || !this.residency.overBudget) return [];
    const { evict, fits } = chooseEvictions(this.#residents(), this.residency.budgetBytes);
    await this.#unload(evict.map((key) => this.#partOf(key)));
    if (!fits && !this.#warnedOverBudget) {
      this.#options.logger.warn("expert residency over budget: pinned or busy experts exceed it", {
        budget_bytes: this.residency.budgetBytes,
        used_bytes: this.residency.usedBytes,
      });
    }
    this.#warnedOverBudget = !fits;
    return evict;
  }

  #enforceSoon(): void {
    this.#enforceBudget().catch((error) =>
      this.#options.logger.error("expert eviction failed", { error: (error as Error).message })
    );
  }

  /** Evicts for the experts loading now (busy, hence protected; their bytes counted). */
  async #makeRoom(): Promise<void> {
    if (!this.#options.executor.unload || this.residency.budgetBytes === null) return;
    const { evict } = chooseEvictions(this.#residents(), this.residency.budgetBytes);
    await this.#unload(evict.map((key) => this.#partOf(key)));
  }

  async #unload(parts: readonly ModelPart[]): Promise<void> {
    if (parts.length === 0) return;
    for (const part of parts) this.residency.evicted(modelPartKey(part));
    await this.#options.executor.unload?.(parts);
  }

  async #load(parts: ModelPart[]): Promise<void> {
    const { executor, manifest } = this.#options;
    if (!executor.load || parts.length === 0) return;
    // One load per part at a time, even when many requests need it at once.
    const fresh = parts.filter((part) => !this.#loading.has(modelPartKey(part)));
    if (fresh.length > 0) {
      // Registered before the first await: concurrent callers join this load, and
      // making room counts these parts as loading (busy, their bytes reserved).
      const loading = Promise.resolve().then(() => this.#makeRoom()).then(() =>
        executor.load!(fresh)
      ).then(() =>
        // Warm-up: one row through each new session, so the first request pays nothing.
        Promise.all(
          fresh.map((part) => executor.execute(part, new Float32Array(manifest.d_model), 1)),
        )
      ).then(() => {
        for (const part of fresh) {
          if (part.kind === "expert") {
            this.residency.warmed(modelPartKey(part), part.layer, part.expert);
          }
        }
      }).finally(() => {
        for (const part of fresh) {
          this.#loading.delete(modelPartKey(part));
          this.#loadingParts.delete(modelPartKey(part));
        }
      });
      for (const part of fresh) {
        this.#loading.set(modelPartKey(part), loading);
        this.#loadingParts.set(modelPartKey(part), part);
      }
    }
    await Promise.all(parts.map((part) => this.#loading.get(modelPartKey(part))));
  }
}
