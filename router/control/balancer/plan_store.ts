/**
 * @module Placement plans in Deno KV, shared by every router instance.
 *
 * Keys (per model):
 * - `["plan", model, version]` → the {@linkcode PlacementPlan} (`version` a number);
 * - `["plan", model, "current"]` → the version routers and backends run;
 * - `["plan", model, "pinned"]` → a version the balancer must not move away from (absent: none);
 * - `["plan", model, "next_version"]` → the last version handed out.
 *
 * Every read-modify-write is a `kv.atomic()` with a `check` on what was read, so two
 * routers never hand out the same version or both switch the current plan. With a
 * `fence` (the leader lease), switching the current plan also checks the lease and
 * writes `["plan", model, "term"]` → `{term, holder, version}` in the same commit: a
 * router that no longer leads cannot switch a plan. A plan must
 * fit one KV value (64 KiB): about 20 000 slots over all layers, far above the models
 * Switchyard serves today.
 */
import type { PlacementPlan } from "../../../shared/placement_plan.ts";
import { withKvRetry } from "../state/kv_retry.ts";

/** Options of {@linkcode PlanStore}. */
export interface PlanStoreOptions {
  /** Attempts of a contended read-modify-write before giving up; default 32. */
  maxAttempts?: number;
  /**
   * The leader lease's check for plan switches (null: this router does not lead, so
   * `setCurrent` refuses); default none (a single router).
   */
  fence?: () => Promise<PlanFence | null>;
}

/** What fences a plan switch: the lease check and the term it names. */
export interface PlanFence {
  check: Deno.AtomicCheck;
  term: number;
  holder: string;
}

/** Optional checks of {@linkcode PlanStore.setCurrent}. */
export interface SetCurrentOptions {
  /** Also require the pinned version to be this (`null`: not pinned); default: not checked. */
  expectedPinned?: number | null;
}

function planKey(model: string, version: number): Deno.KvKey {
  return ["plan", model, version];
}

function metaKey(
  model: string,
  name: "current" | "pinned" | "next_version" | "term",
): Deno.KvKey {
  return ["plan", model, name];
}

/** Versioned plans per model in an injected Deno KV; see the module doc for the keys. */
export class PlanStore {
  readonly #kv: Deno.Kv;
  readonly #maxAttempts: number;
  readonly #fence: (() => Promise<PlanFence | null>) | undefined;

  constructor(kv: Deno.Kv, options: PlanStoreOptions = {}) {
    this.#kv = kv;
    this.#maxAttempts = options.maxAttempts ?? 32;
    this.#fence = options.fence;
  }

  /** Hands out the next plan version of `model` (1, 2, …), unique across routers. */
  async nextVersion(model: string): Promise<number> {
    const key = metaKey(model, "next_version");
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      const entry = await this.#kv.get<number>(key);
      const next = (entry.value ?? 0) + 1;
      const result = await this.#kv.atomic().check(entry).set(key, next).commit();
      if (result.ok) return next;
    }
    throw new Error(
      `Cannot allocate a plan version for model "${model}": ${this.#maxAttempts} attempts contended`,
    );
  }

  /** Stores `plan` under its model and version (overwrites the same version). */
  async save(plan: PlacementPlan): Promise<void> {
    await withKvRetry(() => this.#kv.set(planKey(plan.model, plan.version), plan));
  }

  /** The plan `version` of `model`, or null. */
  async get(model: string, version: number): Promise<PlacementPlan | null> {
    return (await this.#kv.get<PlacementPlan>(planKey(model, version))).value;
  }

  /** The current version of `model`, or null when none was ever set. */
  async currentVersion(model: string): Promise<number | null> {
    return (await this.#kv.get<number>(metaKey(model, "current"))).value;
  }

  /** The current plan of `model`, or null. */
  async current(model: string): Promise<PlacementPlan | null> {
    const version = await this.currentVersion(model);
    return version === null ? null : await this.get(model, version);
  }

  /**
   * Makes `version` current if the current version is still `expectedCurrent` (null: none)
   * and, when given, the pin is still `expectedPinned`; false when another writer got
   * there first. Throws a RangeError when the plan was never saved.
   */
  setCurrent(
    model: string,
    version: number,
    expectedCurrent: number | null,
    options: SetCurrentOptions = {},
  ): Promise<boolean> {
    // A commit refused with "database is locked" did not happen: trying again is safe.
    return withKvRetry(() => this.#setCurrent(model, version, expectedCurrent, options));
  }

  async #setCurrent(
    model: string,
    version: number,
    expectedCurrent: number | null,
    options: SetCurrentOptions,
  ): Promise<boolean> {
    const [current, pinned, plan] = await this.#kv.getMany<[number, number, PlacementPlan]>([
      metaKey(model, "current"),
      metaKey(model, "pinned"),
      planKey(model, version),
    ]);
    if (plan.value === null) {
      throw new RangeError(`Cannot make plan current: model "${model}" has no version ${version}`);
    }
    if (current.value !== expectedCurrent) return false;
    const operation = this.#kv.atomic().check(current).check(plan);
    if (options.expectedPinned !== undefined) {
      if (pinned.value !== options.expectedPinned) return false;
      operation.check(pinned);
    }
    if (this.#fence !== undefined) {
      const fence = await this.#fence();
      if (fence === null) return false;
      operation.check(fence.check)
        .set(metaKey(model, "term"), { term: fence.term, holder: fence.holder, version });
    }
    const result = await operation.set(metaKey(model, "current"), version).commit();
    return result.ok;
  }

  /**
   * Makes `plan` (one a backend runs) current when `model` has no current plan at all —
   * an empty or replaced KV — saving it under its own version and moving `next_version`
   * up to it, so later versions stay above what backends have seen. Fenced like
   * {@linkcode PlanStore.setCurrent}; false when a current plan exists or the fence fails.
   */
  adopt(plan: PlacementPlan): Promise<boolean> {
    return withKvRetry(async () => {
      const [current, next] = await this.#kv.getMany<[number, number]>([
        metaKey(plan.model, "current"),
        metaKey(plan.model, "next_version"),
      ]);
      if (current.value !== null) return false;
      const operation = this.#kv.atomic().check(current).check(next)
        .set(planKey(plan.model, plan.version), plan)
        .set(metaKey(plan.model, "next_version"), Math.max(next.value ?? 0, plan.version));
      if (this.#fence !== undefined) {
        const fence = await this.#fence();
        if (fence === null) return false;
        operation.check(fence.check).set(metaKey(plan.model, "term"), {
          term: fence.term,
          holder: fence.holder,
          version: plan.version,
        });
      }
      return (await operation.set(metaKey(plan.model, "current"), plan.version).commit()).ok;
    });
  }

  /** The lease term (and holder) that switched the current plan, when fenced. */
  async term(model: string): Promise<{ term: number; holder: string; version: number } | null> {
    return (await this.#kv.get<{ term: number; holder: string; version: number }>(
      metaKey(model, "term"),
    )).value;
  }

  /** Pins `model` to `version`; throws a RangeError when the plan was never saved. */
  async pin(model: string, version: number): Promise<void> {
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      const plan = await this.#kv.get<PlacementPlan>(planKey(model, version));
      if (plan.value === null) {
        throw new RangeError(`Cannot pin plan: model "${model}" has no version ${version}`);
      }
      const result = await this.#kv.atomic().check(plan).set(metaKey(model, "pinned"), version)
        .commit();
      if (result.ok) return;
    }
    throw new Error(`Cannot pin plan: ${this.#maxAttempts} attempts contended`);
  }

  /** Removes the pin of `model`; returns the version that was pinned, or null. */
  async unpin(model: string): Promise<number | null> {
    const key = metaKey(model, "pinned");
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      const entry = await this.#kv.get<number>(key);
      if (entry.value === null) return null;
      const result = await this.#kv.atomic().check(entry).delete(key).commit();
      if (result.ok) return entry.value;
    }
    throw new Error(`Cannot unpin plan: ${this.#maxAttempts} attempts contended`);
  }

  /** The pinned version of `model`, or null. */
  async pinned(model: string): Promise<number | null> {
    return (await this.#kv.get<number>(metaKey(model, "pinned"))).value;
  }

  /** Up to `limit` stored plans of `model`, newest version first. */
  async history(model: string, limit = 20): Promise<PlacementPlan[]> {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`Cannot list plans: limit must be a positive integer, got ${limit}`);
    }
    // Versions are numbers, which KV orders after the string keys ("current", …).
    const plans: PlacementPlan[] = [];
    const entries = this.#kv.list<PlacementPlan>(
      { start: planKey(model, 0), end: planKey(model, Number.MAX_SAFE_INTEGER) },
      { reverse: true, limit },
    );
    for await (const entry of entries) plans.push(entry.value);
    return plans;
  }
}
