/**
 * @module The placement plan: which logical expert each physical expert slot of the
 * pool holds, per layer. Versioned; the router keeps the current one in Deno KV and
 * pushes it to backends (`PUT /v2/plan` stages, `POST /v2/plan/activate` switches).
 *
 * Slots are numbered backend by backend: backend `b` (index in `backends`) owns slots
 * `[b·S, (b+1)·S)` with `S = slotsPerBackend`, the same layout as EPLB's `phy2log`
 * with one "GPU" per backend. Gates and shared experts are not placed: every backend
 * hosts them.
 */
import { z } from "zod";
import { PlanOwnerSchema } from "./plan_owner.ts";

/** A backend of the pool as the plan names it. */
export const PlanBackendSchema = z.object({
  id: z.string().min(1),
  url: z.url({ protocol: /^https?$/ }),
});

/** Placement of one MoE layer. */
export const LayerPlacementSchema = z.object({
  /** Logical expert of every physical slot (length = backends × slotsPerBackend). */
  phy2log: z.array(z.int().min(0)),
  /**
   * Share of its logical expert's rows each slot should take; default: an equal share
   * for every replica. Only ratios between replicas of one expert matter.
   */
  replicaWeights: z.array(z.number().min(0)).optional(),
});

/** A versioned placement plan for one model. */
export const PlacementPlanSchema = z.object({
  model: z.string().min(1),
  version: z.int().positive(),
  createdAt: z.number(),
  /** Why this plan exists, for operators ("initial static", "rebalance: …", "admin apply"). */
  reason: z.string(),
  backends: z.array(PlanBackendSchema).min(1),
  slotsPerBackend: z.int().positive(),
  layers: z.array(LayerPlacementSchema).min(1),
  /**
   * The pool and leader term that made it (`shared/plan_owner.ts`); optional so plans kept
   * by older routers still parse. The headers of the call that stages it are what backends check.
   */
  owner: PlanOwnerSchema.optional(),
});

/** A placement plan. */
export type PlacementPlan = z.infer<typeof PlacementPlanSchema>;
/** A backend entry of a plan. */
export type PlanBackend = z.infer<typeof PlanBackendSchema>;

/**
 * Body of `PUT /v2/plan/weights`: live replica weights for the active plan `version`,
 * per layer per physical slot (the router derives them from load reports).
 */
export const ReplicaWeightsBodySchema = z.object({
  version: z.int().positive(),
  weights: z.array(z.array(z.number().min(0))),
});

/** Live replica weights pushed to backends. */
export type ReplicaWeightsBody = z.infer<typeof ReplicaWeightsBodySchema>;

/**
 * Replica weights from measured backend utilisation: a slot's weight is the headroom of
 * its backend, `max(floor, 1 − utilisation)`, so replicas on busy backends get fewer of
 * their expert's rows. Backends without a fresh measurement count as half busy.
 */
export function replicaWeightsFromUtilisation(
  plan: PlacementPlan,
  utilisation: ReadonlyMap<string, number>,
  floor = 0.05,
): number[][] {
  const perBackend = plan.backends.map((backend) =>
    Math.max(floor, 1 - (utilisation.get(backend.id) ?? 0.5))
  );
  return plan.layers.map((placement) =>
    placement.phy2log.map((_, slot) => perBackend[Math.floor(slot / plan.slotsPerBackend)]!)
  );
}

/** Body of `POST /v2/plan/activate` and `POST /v2/plan/release`. */
export const PlanVersionBodySchema = z.object({ version: z.int().positive() });

/** Checks a plan against a model's shape; returns a message naming the problem, or null. */
export function planProblem(
  plan: PlacementPlan,
  model: { name: string; layers: number; experts: number },
): string | null {
  if (plan.model !== model.name) return `plan is for model "${plan.model}", not "${model.name}"`;
  if (plan.layers.length !== model.layers) {
    return `plan has ${plan.layers.length} layers, model "${model.name}" has ${model.layers}`;
  }
  const ids = new Set(plan.backends.map((b) => b.id));
  if (ids.size !== plan.backends.length) return "plan names a backend id twice";
  const slots = plan.backends.length * plan.slotsPerBackend;
  for (const [layer, placement] of plan.layers.entries()) {
    if (placement.phy2log.length !== slots) {
      return `layers[${layer}].phy2log has ${placement.phy2log.length} slots, expected ${slots}`;
    }
    // A typed array, not a Set: the balancer checks its plan every evaluation.
    const seen = new Uint8Array(model.experts);
    let distinct = 0;
    const row = placement.phy2log;
    for (let slot = 0; slot < row.length; slot++) {
      const expert = row[slot]!;
      if (expert >= model.experts) {
        return `layers[${layer}].phy2log[${slot}] is expert ${expert}, model has ${model.experts}`;
      }
      if (seen[expert] === 0) distinct++;
      seen[expert] = 1;
    }
    if (distinct !== model.experts) {
      return `layers[${layer}] places no replica of expert ${seen.indexOf(0)}`;
    }
    if (placement.replicaWeights && placement.replicaWeights.length !== slots) {
      return `layers[${layer}].replicaWeights has ${placement.replicaWeights.length} entries, expected ${slots}`;
    }
  }
  return null;
}

/** A replica of a logical expert: its physical slot, backend and weight. */
export interface Replica {
  slot: number;
  backend: string;
  weight: number;
}

/** For one layer, every logical expert's replicas (index = logical expert). */
export function replicasByExpert(plan: PlacementPlan, layer: number, experts: number): Replica[][] {
  const placement = plan.layers[layer]!;
  const out: Replica[][] = Array.from({ length: experts }, () => []);
  placement.phy2log.forEach((expert, slot) => {
    out[expert]?.push({
      slot,
      backend: plan.backends[Math.floor(slot / plan.slotsPerBackend)]!.id,
      weight: placement.replicaWeights?.[slot] ?? 1,
    });
  });
  return out;
}

/** The logical experts a backend hosts in each layer (sorted, distinct). */
export function hostedExperts(plan: PlacementPlan, backendId: string): number[][] {
  const index = plan.backends.findIndex((b) => b.id === backendId);
  if (index < 0) return plan.layers.map(() => []);
  const from = index * plan.slotsPerBackend;
  return plan.layers.map((placement) =>
    [...new Set(placement.phy2log.slice(from, from + plan.slotsPerBackend))].sort((a, b) => a - b)
  );
}

/** Options of {@linkcode staticPlan}. */
export interface StaticPlanOptions {
  model: string;
  layers: number;
  experts: number;
  backends: PlanBackend[];
  /** Slots per backend; default `ceil(experts / backends)`. */
  slotsPerBackend?: number;
  version?: number;
  now?: number;
}

/**
 * The static baseline placement: experts in contiguous blocks, backend by backend
 * (expert `e` on backend `floor(e / ceil(E/B))`); spare slots repeat experts round-robin.
 */
export function staticPlan(options: StaticPlanOptions): PlacementPlan {
  const backends = options.backends.length;
  const perBackend = options.slotsPerBackend ?? Math.ceil(options.experts / backends);
  if (perBackend * backends < options.experts) {
    throw new RangeError(
      `Cannot make a static plan: ${backends} backends × ${perBackend} slots < ${options.experts} experts`,
    );
  }
  const block = Math.ceil(options.experts / backends);
  const phy2log: number[] = [];
  let spare = 0;
  for (let b = 0; b < backends; b++) {
    const own = Array.from({ length: block }, (_, i) => b * block + i).filter((e) =>
      e < options.experts
    );
    const slots = own.slice(0, perBackend);
    while (slots.length < perBackend) slots.push(spare++ % options.experts);
    phy2log.push(...slots);
  }
  return {
    model: options.model,
    version: options.version ?? 1,
    createdAt: options.now ?? Date.now(),
    reason: "static placement",
    backends: options.backends,
    slotsPerBackend: perBackend,
    layers: Array.from({ length: options.layers }, () => ({ phy2log: [...phy2log] })),
  };
}
