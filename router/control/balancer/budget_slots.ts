/**
 * @module Budget-aware slot sizing, pure: how many expert slots per layer a plan may give
 * each backend so that no backend holds more routed-expert bytes than its
 * `backend.memory_budget_mb`.
 *
 * A backend holding `S` slots per layer hosts at most `S · layers` routed experts (fewer
 * when two slots of one layer hold the same expert), each of at most `expertBytes`
 * (gates and shared experts are outside the budget, as on the backend). So the plan's
 * `S ≤ floor(budget ÷ (layers · expertBytes))` for every backend with a budget — plans
 * use one `S` for all backends, so the tightest budget sets it. When that `S` is below
 * the configured `ceil(E/B) + spare`, replicas go first (fewer spare slots); when
 * `S · B < E` not even one replica per expert fits and there is no plan: the answer
 * says so, with the numbers.
 */

/** One backend's memory budget as its load report states it. */
export interface BackendBudget {
  /** `null`: unlimited. */
  budgetBytes: number | null;
  /** The largest routed expert's bytes on that backend. */
  expertBytes: number;
}

/** The slots a plan may use per backend, or why no plan fits. */
export type SlotLimit =
  | { ok: true; slots: number; limitedBy: string | null }
  | { ok: false; reason: string };

/** Largest slots per layer within `budget` for a model of `layers` layers. */
export function slotsWithin(budget: BackendBudget, layers: number): number {
  if (budget.budgetBytes === null) return Number.POSITIVE_INFINITY;
  if (!(budget.expertBytes > 0) || !(layers > 0)) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.floor(budget.budgetBytes / (layers * budget.expertBytes)));
}

/**
 * Slots per backend: `wanted` (the configured sizing) capped by every backend's budget.
 * Backends missing from `budgets` are unlimited (no report yet says otherwise).
 */
export function limitSlots(
  wanted: number,
  options: {
    experts: number;
    layers: number;
    backends: readonly string[];
    budgets: ReadonlyMap<string, BackendBudget>;
  },
): SlotLimit {
  let slots = wanted;
  let limitedBy: string | null = null;
  for (const id of options.backends) {
    const budget = options.budgets.get(id);
    if (budget === undefined) continue;
    const fits = slotsWithin(budget, options.layers);
    if (fits < slots) [slots, limitedBy] = [fits, id];
  }
  const b = options.backends.length;
  if (limitedBy !== null && slots * b < options.experts) {
    const budget = options.budgets.get(limitedBy!)!;
    const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
    return {
      ok: false,
      reason: `the memory budget of ${limitedBy} (${mb(budget.budgetBytes!)} MiB) fits ` +
        `${slots} expert${slots === 1 ? "" : "s"} per layer (${options.layers} layers × ` +
        `${mb(budget.expertBytes)} MiB each); ${b} backend${b === 1 ? "" : "s"} × ${slots} < ` +
        `${options.experts} experts: not even one replica per expert fits — raise ` +
        `backend.memory_budget_mb or add backends`,
    };
  }
  return { ok: true, slots, limitedBy };
}
