/**
 * @module Pure arithmetic over placement plans: turning a planner result into a versioned
 * {@linkcode PlacementPlan}, predicting how evenly a plan spreads a given expert load over
 * the backends, and counting the replicas a switch makes backends load.
 *
 * Prediction model: a logical expert's rows split over its replicas by replica weight
 * (equal shares when the plan has none), so a backend's load in a layer is
 * Σ over its slots of `load[e] · w_slot / Σ w(e's replicas)`. Balancedness is mean ÷ max
 * over backends (EPLB's measure), 1 when nothing is loaded.
 */
import {
  hostedExperts,
  type PlacementPlan,
  type PlanBackend,
} from "../../../shared/placement_plan.ts";

/** A planner result: `[layers][slots]` logical expert of each slot (backend-major). */
export interface PlannedSlots {
  phy2log: readonly (readonly number[])[];
}

/** Options of {@linkcode planFromPlacement}. */
export interface PlanFromPlacementOptions {
  model: string;
  version: number;
  /** Backends in slot order: backend `b` owns slots `[b·S, (b+1)·S)`. */
  backends: PlanBackend[];
  reason: string;
  /** Creation time, ms since the epoch. */
  now: number;
}

/** The versioned plan of a planner result; throws a RangeError when slots do not split evenly. */
export function planFromPlacement(
  placement: PlannedSlots,
  options: PlanFromPlacementOptions,
): PlacementPlan {
  const slots = placement.phy2log[0]?.length ?? 0;
  const backends = options.backends.length;
  if (backends === 0 || slots === 0 || slots % backends !== 0) {
    throw new RangeError(
      `Cannot make a plan: ${slots} slots do not split evenly over ${backends} backends`,
    );
  }
  return {
    model: options.model,
    version: options.version,
    createdAt: options.now,
    reason: options.reason,
    backends: options.backends.map(({ id, url }) => ({ id, url })),
    slotsPerBackend: slots / backends,
    layers: placement.phy2log.map((row) => ({ phy2log: [...row] })),
  };
}

/** Predicted balancedness of a plan under a load. */
export interface PredictedBalance {
  /** `[layers]`: mean ÷ max of the backends' loads in that layer. */
  perLayer: number[];
  /** Mean ÷ max of the backends' loads summed over layers. */
  pool: number;
}

/** Mean ÷ max of `loads`; 1 when empty or all zero. */
export function meanOverMax(loads: readonly number[]): number {
  let max = 0;
  let sum = 0;
  for (const load of loads) {
    max = Math.max(max, load);
    sum += load;
  }
  if (max === 0) return 1;
  return Math.min(1, sum / loads.length / max);
}

/**
 * `[layers][backends]`: the load each backend of `plan` would carry under `loads`
 * (`[layers][logical experts]`, e.g. tokens/s). Throws a RangeError when shapes differ.
 */
export function backendLoads(
  plan: PlacementPlan,
  loads: readonly (readonly number[])[],
): number[][] {
  if (loads.length !== plan.layers.length) {
    throw new RangeError(
      `Cannot predict balance: load has ${loads.length} layers, plan has ${plan.layers.length}`,
    );
  }
  // Plain loops: the balancer scores plans every evaluation (every 2 s, 256 experts).
  const backends = plan.backends.length;
  const perSlot = plan.slotsPerBackend;
  return plan.layers.map((placement, layer) => {
    const row = loads[layer]!;
    const slots = placement.phy2log;
    const weights = placement.replicaWeights;
    const totalWeight = new Float64Array(row.length);
    const replicas = new Float64Array(row.length);
    for (let slot = 0; slot < slots.length; slot++) {
      const expert = slots[slot]!;
      if (expert >= row.length) {
        throw new RangeError(
          `Cannot predict balance: layers[${layer}].phy2log[${slot}] is expert ${expert}, load has ${row.length}`,
        );
      }
      totalWeight[expert]! += weights?.[slot] ?? 1;
      replicas[expert]! += 1;
    }
    const perBackend = new Array<number>(backends).fill(0);
    for (let slot = 0; slot < slots.length; slot++) {
      const expert = slots[slot]!;
      const total = totalWeight[expert]!;
      // All-zero replica weights mean "no preference": equal shares.
      const share = total > 0 ? (weights?.[slot] ?? 1) / total : 1 / replicas[expert]!;
      perBackend[Math.floor(slot / perSlot)]! += row[expert]! * share;
    }
    return perBackend;
  });
}

/** Per-layer and pool balancedness `plan` would reach under `loads` (`[layers][experts]`). */
export function predictedBalance(
  plan: PlacementPlan,
  loads: readonly (readonly number[])[],
): PredictedBalance {
  const perBackend = backendLoads(plan, loads);
  const totals = new Array<number>(plan.backends.length).fill(0);
  for (const layer of perBackend) layer.forEach((load, b) => totals[b]! += load);
  return { perLayer: perBackend.map(meanOverMax), pool: meanOverMax(totals) };
}

/** Pool balancedness of `plan` under `loads`, or null when their shapes do not match. */
export function poolBalanceOrNull(
  plan: PlacementPlan,
  loads: readonly (readonly number[])[],
): number | null {
  try {
    return predictedBalance(plan, loads).pool;
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/**
 * Number of (layer, backend, expert) hostings in `to` that `from` lacks: experts backends
 * must newly load to switch. Backends match by id; `from` null counts every hosting.
 */
export function replicasMoved(from: PlacementPlan | null, to: PlacementPlan): number {
  let moved = 0;
  for (const backend of to.backends) {
    const before = from === null ? [] : hostedExperts(from, backend.id);
    hostedExperts(to, backend.id).forEach((experts, layer) => {
      const had = new Set(before[layer] ?? []);
      for (const expert of experts) if (!had.has(expert)) moved++;
    });
  }
  return moved;
}

/**
 * Slots each backend gets: `ceil(E/B)` to hold every expert once, plus
 * `ceil(redundancy · E/B)` spare slots for replicas of hot experts.
 */
export function slotsPerBackend(experts: number, backends: number, redundancy: number): number {
  if (!Number.isInteger(experts) || experts < 1) {
    throw new RangeError(`Cannot size slots: experts must be a positive integer, got ${experts}`);
  }
  if (!Number.isInteger(backends) || backends < 1) {
    throw new RangeError(`Cannot size slots: backends must be a positive integer, got ${backends}`);
  }
  if (!Number.isFinite(redundancy) || redundancy < 0) {
    throw new RangeError(`Cannot size slots: redundancy must be ≥ 0, got ${redundancy}`);
  }
  // The epsilon keeps 0.1 · 30 / 3 = 1.0000000000000002 from costing a whole extra slot.
  const spare = Math.ceil((redundancy * experts) / backends - 1e-9);
  return Math.ceil(experts / backends) + Math.max(0, spare);
}
