/**
 * @module Switchyard's expert placement planner: EPLB's replicate-and-pack with better replica
 * counts and a swap refinement, never worse than the greedy baseline on max GPU load.
 *
 * Design.
 * - Idea: EPLB solves two problems greedily and in sequence: replica counts by D'Hondt (next
 *   replica to the highest load per replica, which minimises the heaviest replica), then LPT
 *   packing (heaviest replica into the lightest GPU with a free slot). What matters is the max
 *   GPU load after packing, and LPT with a fixed slot count per GPU leaves slack. Per layer
 *   (and per node in hierarchical mode) this planner:
 *   1. starts from D'Hondt counts capped at one replica per GPU while slots allow it (a second
 *      replica on a GPU that already holds the expert balances nothing);
 *   2. packs by LPT twice, plain and label-spreading (lightest GPU *not yet holding* the
 *      expert), refines both, keeps the lower max load;
 *   3. refines by swaps: one replica on the most loaded GPU for a lighter one on another GPU,
 *      when that lowers the top GPU without lifting the other to its level; best pair first
 *      (pair max closest to the pair mean), until no swap helps;
 *   4. searches counts locally: one replica moves from a donor (least per-replica increase)
 *      to one of the heaviest experts on the most loaded GPU (2 receivers × 3 donors tried);
 *      repack, refine, keep the first move that lowers the max; stop when none does, after
 *      `countSteps` moves, or when within `tolerance` of the lower bound
 *      max(total / GPUs, heaviest replica);
 *   5. in hierarchical mode, packs groups to nodes by LPT and by LPT + swaps, keeps the better;
 *   6. finally, per layer, keeps the greedy baseline when the planner is not at least as good.
 * - Invariants: every logical expert keeps ≥ 1 replica; counts sum to `num_replicas`; every
 *   GPU holds exactly `num_replicas / num_gpus` slots (all moves are one-for-one swaps); in
 *   hierarchical mode each group and all its replicas stay on one node; swaps never add a
 *   second replica of an expert to a GPU; the max GPU load is ≤ the baseline's, exactly
 *   (both measured by {@linkcode maxGpuLoad}, summing slots in the same order).
 * - Knobs: `refine` (default true; false = capped counts + spreading LPT, still with the
 *   baseline fallback), `countSteps` (default 16), `tolerance` (default 1e-3), and in code
 *   the swap budget (4 swaps per item) and the move fan-out (`RECEIVERS`, `DONORS`).
 */
import { argMax, lptPack, type Packing, refinePacking, spreadDuplicates } from "./_packing.ts";
import {
  assemblePlan,
  type EplbPlacement,
  greedyLayer,
  type LayerPlacement,
} from "./eplb_greedy.ts";
import {
  layerShape,
  parsePlacementInput,
  type PlacementInput,
  type PlacementPolicy,
} from "./placement_input.ts";

/** Options of {@linkcode planPlacement}. */
export interface PlanPlacementOptions {
  /** Which policy; default `"auto"` (hierarchical when `num_groups % num_nodes == 0`). */
  policy?: PlacementPolicy;
  /** Run the swap refinement and the count search; default true. */
  refine?: boolean;
  /** Replica-count moves tried per node and layer; default 16. */
  countSteps?: number;
  /** Stop the count search once the max GPU load is within this fraction of a lower bound; default 1e-3. */
  tolerance?: number;
}

/** Summary of a plan: worst and mean balancedness, and the max GPU load per layer. */
export interface PlanStats {
  /** Number of layers. */
  layers: number;
  /** Mean over layers of mean/max GPU load. */
  meanBalancedness: number;
  /** Lowest per-layer balancedness. */
  minBalancedness: number;
  /** `[layers]`: max GPU load. */
  maxGpuLoad: number[];
}

interface Knobs {
  refine: boolean;
  countSteps: number;
  tolerance: number;
}

const EPSILON = 1e-12;
const RECEIVERS = 2;
const DONORS = 3;

/** Plans replica counts and placement per layer; max GPU load is never above {@linkcode greedyLayer}'s. */
export function planPlacement(
  input: PlacementInput,
  options: PlanPlacementOptions = {},
): EplbPlacement {
  const parsed = parsePlacementInput(input);
  const shape = layerShape(parsed, options.policy);
  const refine = options.refine ?? true;
  const knobs: Knobs = {
    refine,
    countSteps: refine ? options.countSteps ?? 16 : 0,
    tolerance: options.tolerance ?? 1e-3,
  };
  const slotsPerGpu = parsed.num_replicas / parsed.num_gpus;
  const layers = parsed.weight.map((row) => {
    const baseline = greedyLayer(row, shape);
    const planned = planLayer(row, shape, knobs);
    const baselineMax = maxGpuLoad(row, baseline.phy2log, slotsPerGpu);
    const plannedMax = maxGpuLoad(row, planned.phy2log, slotsPerGpu);
    return plannedMax <= baselineMax ? planned : baseline;
  });
  return assemblePlan(parsed, layers);
}

/** Per-plan summary: balancedness (mean and worst layer) and each layer's max GPU load. */
export function planStats(plan: EplbPlacement): PlanStats {
  const layers = plan.balancedness.length;
  return {
    layers,
    meanBalancedness: plan.balancedness.reduce((a, b) => a + b, 0) / Math.max(layers, 1),
    minBalancedness: Math.min(...plan.balancedness),
    maxGpuLoad: plan.gpuLoad.map((loads) => Math.max(...loads)),
  };
}

/** The max GPU load of one layer's slot assignment. */
export function maxGpuLoad(
  weights: readonly number[],
  phy2log: readonly number[],
  slotsPerGpu: number,
): number {
  const counts = new Array<number>(weights.length).fill(0);
  for (const log of phy2log) counts[log]! += 1;
  let max = 0;
  for (let start = 0; start < phy2log.length; start += slotsPerGpu) {
    let load = 0;
    for (let slot = start; slot < start + slotsPerGpu; slot++) {
      const log = phy2log[slot]!;
      load += weights[log]! / counts[log]!;
    }
    max = Math.max(max, load);
  }
  return max;
}

function planLayer(
  weights: readonly number[],
  shape: { numPhysical: number; numGroups: number; numNodes: number; numGpus: number },
  knobs: Knobs,
): LayerPlacement {
  const { numGroups, numNodes } = shape;
  const groupSize = weights.length / numGroups;
  const groupWeights = Array.from({ length: numGroups }, (_, g) => {
    let total = 0;
    for (let i = g * groupSize; i < (g + 1) * groupSize; i++) total += weights[i]!;
    return total;
  });
  // Step 1: groups to nodes by LPT; with refinement, also the swap-refined assignment.
  const groups = { weights: groupWeights, labels: groupWeights.map((_, g) => g) };
  const lpt = lptPack(groups, numNodes);
  const assignments = [lpt.labels];
  if (knobs.refine && numNodes > 1) {
    const refined = lptPack(groups, numNodes);
    refinePacking(refined, 4 * numGroups);
    if (refined.labels.some((group, i) => group !== lpt.labels[i])) {
      assignments.push(refined.labels);
    }
  }
  let best: { placement: LayerPlacement; max: number } | undefined;
  for (const groupsBySlot of assignments) {
    const candidate = placeGroups(weights, groupsBySlot, shape, knobs);
    if (best === undefined || candidate.max < best.max) best = candidate;
  }
  return best!.placement;
}

/** Steps 2 and 3 for every node, given the groups of each node (node-major order). */
function placeGroups(
  weights: readonly number[],
  groupsBySlot: Int32Array,
  shape: { numPhysical: number; numGroups: number; numNodes: number; numGpus: number },
  knobs: Knobs,
): { placement: LayerPlacement; max: number } {
  const { numPhysical, numGroups, numNodes, numGpus } = shape;
  const groupSize = weights.length / numGroups;
  const groupsPerNode = numGroups / numNodes;
  const phy2log: number[] = [];
  const phyrank: number[] = [];
  const seen = new Array<number>(weights.length).fill(0);
  let max = 0;
  for (let node = 0; node < numNodes; node++) {
    const nodeLogs: number[] = [];
    for (const group of groupsBySlot.subarray(node * groupsPerNode, (node + 1) * groupsPerNode)) {
      for (let i = 0; i < groupSize; i++) nodeLogs.push(group * groupSize + i);
    }
    const packing = planNode(
      nodeLogs.map((log) => weights[log]!),
      numPhysical / numNodes,
      numGpus / numNodes,
      knobs,
    );
    for (const local of packing.labels) {
      const log = nodeLogs[local]!;
      phy2log.push(log);
      phyrank.push(seen[log]!++);
    }
    max = Math.max(max, ...packing.loads);
  }
  return { placement: { phy2log, phyrank }, max };
}

function planNode(
  weights: readonly number[],
  slots: number,
  gpus: number,
  knobs: Knobs,
): Packing {
  let counts = cappedCounts(weights, slots, gpus);
  let best = packCounts(weights, counts, gpus, knobs.refine);
  let bestMax = Math.max(...best.loads);
  const lowerBound = Math.max(
    weights.reduce((a, b) => a + b, 0) / gpus,
    ...weights.map((w, e) => w / counts[e]!),
  );
  for (let step = 0; step < knobs.countSteps; step++) {
    if (bestMax <= lowerBound * (1 + knobs.tolerance)) break;
    let improved = false;
    for (const moved of replicaMoves(weights, counts, best)) {
      const candidate = packCounts(weights, moved, gpus, knobs.refine);
      const candidateMax = Math.max(...candidate.loads);
      if (candidateMax < bestMax * (1 - EPSILON)) {
        counts = moved;
        best = candidate;
        bestMax = candidateMax;
        improved = true;
        break;
      }
    }
    if (!improved) break;
  }
  return best;
}

/** D'Hondt replica counts with at most `cap` replicas per expert while slots allow it. */
function cappedCounts(weights: readonly number[], slots: number, cap: number): number[] {
  const counts = weights.map(() => 1);
  for (let slot = weights.length; slot < slots; slot++) {
    let best = -1;
    let bestAny = 0;
    for (let e = 0; e < weights.length; e++) {
      const perReplica = weights[e]! / counts[e]!;
      if (perReplica > weights[bestAny]! / counts[bestAny]!) bestAny = e;
      if (counts[e]! < cap && (best < 0 || perReplica > weights[best]! / counts[best]!)) best = e;
    }
    counts[best < 0 ? bestAny : best]! += 1;
  }
  return counts;
}

/**
 * Count vectors one move away: a replica from a donor (least per-replica increase) to one of
 * the heaviest experts on the most loaded GPU.
 */
function* replicaMoves(
  weights: readonly number[],
  counts: readonly number[],
  packing: Packing,
): Generator<number[]> {
  const top = argMax(packing.loads);
  const onTop = new Set<number>();
  for (let slot = top * packing.perPack; slot < (top + 1) * packing.perPack; slot++) {
    onTop.add(packing.labels[slot]!);
  }
  const receivers = [...onTop]
    .filter((e) => counts[e]! < packing.loads.length)
    .sort((a, b) => weights[b]! / counts[b]! - weights[a]! / counts[a]!)
    .slice(0, RECEIVERS);
  const donors = weights.map((_, e) => e)
    .filter((e) => counts[e]! >= 2)
    .sort((a, b) => weights[a]! / (counts[a]! - 1) - weights[b]! / (counts[b]! - 1))
    .slice(0, DONORS + RECEIVERS);
  for (const receiver of receivers) {
    for (const donor of donors.filter((e) => e !== receiver).slice(0, DONORS)) {
      const moved = [...counts];
      moved[receiver]! += 1;
      moved[donor]! -= 1;
      yield moved;
    }
  }
}

function packCounts(
  weights: readonly number[],
  counts: readonly number[],
  gpus: number,
  refine: boolean,
): Packing {
  const replicaWeights: number[] = [];
  const labels: number[] = [];
  counts.forEach((count, e) => {
    for (let r = 0; r < count; r++) {
      replicaWeights.push(weights[e]! / count);
      labels.push(e);
    }
  });
  const packing = lptPack({ weights: replicaWeights, labels }, gpus);
  if (refine) refinePacking(packing, 4 * labels.length);
  if (!refine) return packing;
  const plain = lptPack({ weights: replicaWeights, labels }, gpus, { spread: false });
  refinePacking(plain, 4 * labels.length);
  const best = Math.max(...plain.loads) < Math.max(...packing.loads) ? plain : packing;
  spreadDuplicates(best);
  return best;
}
