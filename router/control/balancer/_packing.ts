/**
 * @module Packing primitives for the placement planner: LPT with a fixed item count per pack,
 * a swap refinement of the most loaded pack, and a pass that spreads same-label items.
 *
 * Items carry a label (the logical expert, or the group for node packing) and a weight; a
 * pack's slots are `[pack * perPack, (pack + 1) * perPack)`. All moves are one-for-one swaps,
 * so every pack keeps exactly `perPack` items.
 */
import { sortDescending } from "./eplb_greedy.ts";

/** A packing of weighted, labelled items into packs with a fixed number of items each. */
export interface Packing {
  /** Items per pack. */
  perPack: number;
  /** Label of the item in each slot. */
  labels: Int32Array;
  /** Weight of the item in each slot. */
  weights: Float64Array;
  /** Sum of weights per pack. */
  loads: Float64Array;
}

const EPSILON = 1e-12;

/**
 * LPT with a fixed item count per pack (EPLB's `balanced_packing`) as a mutable packing, except
 * that with `spread` (default true) an item goes to the lightest pack not yet holding its
 * label when there is one.
 */
export function lptPack(
  items: { weights: readonly number[]; labels: readonly number[] },
  packs: number,
  options: { spread?: boolean } = {},
): Packing {
  const { weights, labels } = items;
  const spread = options.spread ?? true;
  const perPack = weights.length / packs;
  const packing: Packing = {
    perPack,
    labels: new Int32Array(weights.length).fill(-1),
    weights: new Float64Array(weights.length),
    loads: new Float64Array(packs),
  };
  const filled = new Int32Array(packs);
  for (const item of sortDescending(weights)) {
    const label = labels[item]!;
    let pack = -1;
    let fallback = -1;
    for (let p = 0; p < packs; p++) {
      if (filled[p]! >= perPack) continue;
      if (fallback < 0 || packing.loads[p]! < packing.loads[fallback]!) fallback = p;
      if (
        (pack < 0 || packing.loads[p]! < packing.loads[pack]!) &&
        !(spread && holds(packing, p, label))
      ) pack = p;
    }
    if (pack < 0) pack = fallback;
    const slot = pack * perPack + filled[pack]!++;
    packing.labels[slot] = label;
    packing.weights[slot] = weights[item]!;
    packing.loads[pack]! += weights[item]!;
  }
  return packing;
}

/** Swaps items between the most loaded pack and others while that lowers it; see the design note. */
export function refinePacking(packing: Packing, maxSwaps: number): void {
  const { perPack, labels, weights, loads } = packing;
  for (let swap = 0; swap < maxSwaps; swap++) {
    const top = argMax(loads);
    const topLoad = loads[top]!;
    const tolerance = topLoad * EPSILON;
    let bestPairMax = topLoad - tolerance;
    let bestA = -1;
    let bestB = -1;
    for (let other = 0; other < loads.length; other++) {
      const gap = topLoad - loads[other]!;
      if (other === top || gap <= tolerance || (topLoad + loads[other]!) / 2 >= bestPairMax) {
        continue;
      }
      for (let a = top * perPack; a < (top + 1) * perPack; a++) {
        for (let b = other * perPack; b < (other + 1) * perPack; b++) {
          const delta = weights[a]! - weights[b]!;
          if (delta <= tolerance || delta >= gap - tolerance) continue;
          const pairMax = Math.max(topLoad - delta, loads[other]! + delta);
          if (pairMax >= bestPairMax) continue;
          if (holds(packing, other, labels[a]!) || holds(packing, top, labels[b]!)) continue;
          bestPairMax = pairMax;
          bestA = a;
          bestB = b;
        }
      }
    }
    if (bestA < 0) return;
    const delta = weights[bestA]! - weights[bestB]!;
    loads[top]! -= delta;
    loads[Math.floor(bestB / perPack)]! += delta;
    [labels[bestA], labels[bestB]] = [labels[bestB]!, labels[bestA]!];
    [weights[bestA], weights[bestB]] = [weights[bestB]!, weights[bestA]!];
  }
}

/** Swaps away second replicas of an expert on one pack where that keeps the max load. */
export function spreadDuplicates(packing: Packing): void {
  const { perPack, labels, weights, loads } = packing;
  const ceiling = Math.max(...loads);
  for (let a = 0; a < labels.length; a++) {
    const pack = Math.floor(a / perPack);
    let duplicate = false;
    for (let s = pack * perPack; s < a; s++) if (labels[s] === labels[a]) duplicate = true;
    if (!duplicate) continue;
    let bestB = -1;
    let bestDelta = Infinity;
    for (let b = 0; b < labels.length; b++) {
      const other = Math.floor(b / perPack);
      if (other === pack) continue;
      const delta = weights[a]! - weights[b]!;
      if (loads[pack]! - delta > ceiling || loads[other]! + delta > ceiling) continue;
      if (Math.abs(delta) >= bestDelta) continue;
      if (holds(packing, other, labels[a]!) || holds(packing, pack, labels[b]!)) continue;
      bestB = b;
      bestDelta = Math.abs(delta);
    }
    if (bestB < 0) continue;
    const delta = weights[a]! - weights[bestB]!;
    loads[pack]! -= delta;
    loads[Math.floor(bestB / perPack)]! += delta;
    [labels[a], labels[bestB]] = [labels[bestB]!, labels[a]!];
    [weights[a], weights[bestB]] = [weights[bestB]!, weights[a]!];
  }
}

function holds(packing: Packing, pack: number, label: number): boolean {
  for (let slot = pack * packing.perPack; slot < (pack + 1) * packing.perPack; slot++) {
    if (packing.labels[slot] === label) return true;
  }
  return false;
}

/** Index of the largest value (the first of ties). */
export function argMax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
