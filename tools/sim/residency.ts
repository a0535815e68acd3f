/**
 * @module Expert weights in accelerator memory: which (layer, expert) each accelerator
 * holds, and what a plan switch costs.
 *
 * Model. An accelerator holds at most `capacity` experts (all layers together). Staging a
 * plan loads the experts each accelerator lacks into free memory in the background (the
 * old plan keeps serving); what does not fit is loaded when the plan activates, after
 * evicting experts the new plan does not host — those loads are on the critical path
 * ("cold starts": serving waits for them). A synchronous switch (SGLang-style) loads
 * everything on the critical path.
 */
import { hostedExperts, type PlacementPlan } from "../../shared/placement_plan.ts";

/** What staging a plan will cost, per accelerator and in total. */
export interface StageCost {
  /** Per accelerator: experts loaded in the background / at activation. */
  background: number[];
  overflow: number[];
  /** Experts newly loaded in total, and their bytes. */
  loads: number;
  bytes: number;
  /** Time of the background loads (slowest accelerator), ms. */
  backgroundMs: number;
  /** Critical-path time of the activation loads (slowest accelerator), ms. */
  activationMs: number;
}

/** Memory of every accelerator of the pool. */
export class Residency {
  readonly #resident: Set<number>[];
  readonly #experts: number;
  readonly capacity: number;
  readonly #expertBytes: number;
  readonly #loadBytesPerMs: number;

  constructor(options: {
    devices: number;
    experts: number;
    capacity: number;
    expertBytes: number;
    loadBytesPerMs: number;
  }) {
    this.#resident = Array.from({ length: options.devices }, () => new Set<number>());
    this.#experts = options.experts;
    this.capacity = options.capacity;
    this.#expertBytes = options.expertBytes;
    this.#loadBytesPerMs = options.loadBytesPerMs;
  }

  /** Experts resident on accelerator `d`. */
  residentCount(d: number): number {
    return this.#resident[d]!.size;
  }

  /** Whether (layer, expert) is resident on `d`. */
  has(d: number, layer: number, expert: number): boolean {
    return this.#resident[d]!.has(layer * this.#experts + expert);
  }

  /** Loads a plan's experts with no cost accounting (the start-up placement). */
  install(plan: PlacementPlan): void {
    plan.backends.forEach((_, d) => {
      for (const key of this.#needed(plan, d)) this.#resident[d]!.add(key);
    });
  }

  /**
   * The cost of switching from `current` to `plan`; experts neither plan hosts can be
   * evicted while staging. `synchronous` puts every load on the critical path.
   */
  cost(current: PlacementPlan, plan: PlacementPlan, synchronous = false): StageCost {
    const background: number[] = [];
    const overflow: number[] = [];
    plan.backends.forEach((_, d) => {
      const resident = this.#resident[d]!;
      const needed = this.#needed(plan, d);
      const missing = needed.filter((key) => !resident.has(key)).length;
      const pinned = new Set(this.#needed(current, d));
      for (const key of needed) if (resident.has(key)) pinned.add(key);
      const free = Math.max(0, this.capacity - pinned.size);
      const early = synchronous ? 0 : Math.min(missing, free);
      background.push(early);
      overflow.push(missing - early);
    });
    const loads = background.reduce((a, b) => a + b, 0) + overflow.reduce((a, b) => a + b, 0);
    const ms = (n: number) => (n * this.#expertBytes) / this.#loadBytesPerMs;
    return {
      background,
      overflow,
      loads,
      bytes: loads * this.#expertBytes,
      backgroundMs: ms(Math.max(0, ...background)),
      activationMs: ms(Math.max(0, ...overflow)),
    };
  }

  /**
   * Makes `plan` resident: background loads first, then evicts experts `plan` does not
   * host (lowest key first) to make room for the rest. Returns the experts loaded.
   */
  activate(plan: PlacementPlan): number {
    let loaded = 0;
    plan.backends.forEach((_, d) => {
      const resident = this.#resident[d]!;
      const needed = this.#needed(plan, d);
      const keep = new Set(needed);
      const missing = needed.filter((key) => !resident.has(key));
      const evictable = [...resident].filter((key) => !keep.has(key)).sort((a, b) => a - b);
      for (const key of missing) {
        while (resident.size >= this.capacity && evictable.length > 0) {
          resident.delete(evictable.shift()!);
        }
        resident.add(key);
        loaded++;
      }
    });
    return loaded;
  }

  /**
   * Loads `keys` (layer · experts + expert, most wanted first) onto accelerator `d` in the
   * background (the pre-warm job's `POST /v2/residency/warm`): into free memory, else in
   * place of resident experts neither `current` hosts nor `keys` names (oldest first),
   * never evicting what `current` serves. Returns the keys loaded, already resident, and
   * skipped for want of memory.
   */
  warm(
    current: PlacementPlan,
    d: number,
    keys: readonly number[],
  ): { loaded: number[]; already: number[]; skipped: number[] } {
    const resident = this.#resident[d]!;
    const keep = new Set([...this.#needed(current, d), ...keys]);
    const evictable = [...resident].filter((key) => !keep.has(key));
    const out = { loaded: [] as number[], already: [] as number[], skipped: [] as number[] };
    for (const key of keys) {
      if (resident.has(key)) {
        out.already.push(key);
        continue;
      }
      if (resident.size >= this.capacity) {
        const victim = evictable.shift();
        if (victim === undefined) {
          out.skipped.push(key);
          continue;
        }
        resident.delete(victim);
      }
      resident.add(key);
      out.loaded.push(key);
    }
    return out;
  }

  #needed(plan: PlacementPlan, d: number): number[] {
    const id = plan.backends[d]!.id;
    return hostedExperts(plan, id).flatMap((experts, layer) =>
      experts.map((e) => layer * this.#experts + e)
    );
  }
}
