/**
 * @module The baseline placement planner: DeepSeek's open-source EPLB (`eplb.py`) as plain
 * greedy steps, plus the plan type and the assembly every planner shares.
 *
 * Mirrors `balanced_packing`, `replicate_experts`, `rebalance_experts_hierarchical` and
 * `rebalance_experts`, one layer at a time over plain arrays. Differences: weights stay
 * float64 (eplb.py casts to float32), and the descending sort is stable (ties keep the lower
 * index first), where torch's sort leaves tie order unspecified.
 */
import {
  layerShape,
  parsePlacementInput,
  type PlacementInput,
  type PlacementPolicy,
} from "./placement_input.ts";

/** A placement of replicas on GPUs, for every layer, with its load statistics. */
export interface EplbPlacement {
  /** `[layers][num_replicas]`: logical expert of each physical slot; GPU `g` owns slots `[g*S, (g+1)*S)`. */
  phy2log: number[][];
  /** `[layers][logical][maxReplicas]`: physical slots of each logical expert, `-1` padded. */
  log2phy: number[][][];
  /** `[layers][logical]`: replica count of each logical expert. */
  logcnt: number[][];
  /** `[layers][num_gpus]`: sum over a GPU's slots of `weight[logical] / logcnt[logical]`. */
  gpuLoad: number[][];
  /** `[layers]`: mean GPU load divided by max GPU load; 1 when all loads are zero. */
  balancedness: number[];
}

/** Options of {@linkcode greedyPlacement}. */
export interface GreedyPlacementOptions {
  /** Which policy; default `"auto"` (hierarchical when `num_groups % num_nodes == 0`). */
  policy?: PlacementPolicy;
}

/** One layer's placement: logical expert and replica rank of each physical slot. */
export interface LayerPlacement {
  /** `[num_replicas]`: logical expert of each slot, GPU by GPU. */
  phy2log: number[];
  /** `[num_replicas]`: which replica of its expert the slot is (`0..logcnt-1`). */
  phyrank: number[];
}

/** Packs items into packs of exactly `items / packs` items each, heaviest first into the lightest pack. */
export function balancedPacking(
  weights: readonly number[],
  numPacks: number,
): { packIndex: number[]; rankInPack: number[] } {
  const itemsPerPack = weights.length / numPacks;
  if (itemsPerPack === 1) {
    return { packIndex: weights.map((_, i) => i), rankInPack: weights.map(() => 0) };
  }
  const packIndex = new Array<number>(weights.length).fill(-1);
  const rankInPack = new Array<number>(weights.length).fill(-1);
  const packWeights = new Array<number>(numPacks).fill(0);
  const packItems = new Array<number>(numPacks).fill(0);
  for (const item of sortDescending(weights)) {
    let pack = -1;
    for (let p = 0; p < numPacks; p++) {
      if (packItems[p]! < itemsPerPack && (pack < 0 || packWeights[p]! < packWeights[pack]!)) {
        pack = p;
      }
    }
    packIndex[item] = pack;
    rankInPack[item] = packItems[pack]!;
    packWeights[pack]! += weights[item]!;
    packItems[pack]! += 1;
  }
  return { packIndex, rankInPack };
}

/** Replicates experts to `numPhysical` slots, each extra replica to the highest load per replica. */
export function replicateExperts(
  weights: readonly number[],
  numPhysical: number,
): { phy2log: number[]; phyrank: number[]; logcnt: number[] } {
  const phy2log = weights.map((_, i) => i);
  const phyrank = weights.map(() => 0);
  const logcnt = weights.map(() => 1);
  for (let slot = weights.length; slot < numPhysical; slot++) {
    let best = 0;
    for (let e = 1; e < weights.length; e++) {
      if (weights[e]! / logcnt[e]! > weights[best]! / logcnt[best]!) best = e;
    }
    phy2log.push(best);
    phyrank.push(logcnt[best]!);
    logcnt[best]! += 1;
  }
  return { phy2log, phyrank, logcnt };
}

/** One layer of `rebalance_experts_hierarchical`; the global policy is one node and one group. */
export function greedyLayer(
  weights: readonly number[],
  shape: { numPhysical: number; numGroups: number; numNodes: number; numGpus: number },
): LayerPlacement {
  const { numPhysical, numGroups, numNodes, numGpus } = shape;
  const groupSize = weights.length / numGroups;
  const groupsPerNode = numGroups / numNodes;
  const logPerNode = weights.length / numNodes;
  const phyPerNode = numPhysical / numNodes;
  const phyPerGpu = numPhysical / numGpus;

  // Step 1: pack groups to nodes; mlog ("node-major logical") numbers experts node by node.
  const groupWeights = Array.from(
    { length: numGroups },
    (_, g) => sum(weights.slice(g * groupSize, (g + 1) * groupSize)),
  );
  const groupPacking = balancedPacking(groupWeights, numNodes);
  const mlog2log = new Array<number>(weights.length);
  for (let log = 0; log < weights.length; log++) {
    const group = Math.floor(log / groupSize);
    const slotOfGroup = groupPacking.packIndex[group]! * groupsPerNode +
      groupPacking.rankInPack[group]!;
    mlog2log[slotOfGroup * groupSize + (log % groupSize)] = log;
  }

  const phy2log = new Array<number>(numPhysical);
  const phyrank = new Array<number>(numPhysical);
  for (let node = 0; node < numNodes; node++) {
    // Step 2: replicate experts within the node.
    const nodeLogs = mlog2log.slice(node * logPerNode, (node + 1) * logPerNode);
    const nodeWeights = nodeLogs.map((log) => weights[log]!);
    const replicas = replicateExperts(nodeWeights, phyPerNode);
    // Step 3: pack the node's physical experts onto its GPUs.
    const replicaWeights = replicas.phy2log.map((m) => nodeWeights[m]! / replicas.logcnt[m]!);
    const packing = balancedPacking(replicaWeights, numGpus / numNodes);
    for (let phy = 0; phy < phyPerNode; phy++) {
      const slot = node * phyPerNode + packing.packIndex[phy]! * phyPerGpu +
        packing.rankInPack[phy]!;
      phy2log[slot] = nodeLogs[replicas.phy2log[phy]!]!;
      phyrank[slot] = replicas.phyrank[phy]!;
    }
  }
  return { phy2log, phyrank };
}

/** DeepSeek EPLB's greedy placement (`rebalance_experts`): the baseline every planner must match. */
export function greedyPlacement(
  input: PlacementInput,
  options: GreedyPlacementOptions = {},
): EplbPlacement {
  const parsed = parsePlacementInput(input);
  const shape = layerShape(parsed, options.policy);
  return assemblePlan(parsed, parsed.weight.map((row) => greedyLayer(row, shape)));
}

/** Builds the full plan (maps, counts, loads) from per-layer slot assignments. */
export function assemblePlan(
  input: PlacementInput,
  layers: readonly LayerPlacement[],
): EplbPlacement {
  const experts = input.weight[0]!.length;
  const logcnt = layers.map((layer) => {
    const counts = new Array<number>(experts).fill(0);
    for (const log of layer.phy2log) counts[log]! += 1;
    return counts;
  });
  const maxReplicas = Math.max(...logcnt.map((counts) => Math.max(...counts)));
  const log2phy = layers.map((layer) => {
    const table = Array.from({ length: experts }, () => new Array<number>(maxReplicas).fill(-1));
    layer.phy2log.forEach((log, slot) => table[log]![layer.phyrank[slot]!] = slot);
    return table;
  });
  const slotsPerGpu = input.num_replicas / input.num_gpus;
  const gpuLoad = layers.map((layer, l) => {
    const loads = new Array<number>(input.num_gpus).fill(0);
    layer.phy2log.forEach((log, slot) => {
      loads[Math.floor(slot / slotsPerGpu)]! += input.weight[l]![log]! / logcnt[l]![log]!;
    });
    return loads;
  });
  const balancedness = gpuLoad.map((loads) => {
    const max = Math.max(...loads);
    return max > 0 ? sum(loads) / loads.length / max : 1;
  });
  return {
    phy2log: layers.map((layer) => [...layer.phy2log]),
    log2phy,
    logcnt,
    gpuLoad,
    balancedness,
  };
}

/** Indices of `values`, largest value first; ties keep the lower index first. */
export function sortDescending(values: readonly number[]): number[] {
  return values.map((_, i) => i).sort((a, b) => values[b]! - values[a]! || a - b);
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
