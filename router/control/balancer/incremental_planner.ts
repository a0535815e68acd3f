/**
 * @module The move-minimising planner: starts from the current placement and changes as few
 * replicas as it takes to bring every layer's predicted balancedness up to a goal.
 *
 * Design.
 * - Idea: {@linkcode planPlacement} plans from scratch and ignores where experts already are;
 *   at 256 × 32 a re-plan re-placed ~65 % of the hosted experts each time, while a few
 *   changed replicas per layer would restore the balance. Every replica a backend must newly
 *   host costs one expert's weights on the wire and in memory, so this planner minimises
 *   those, layer by layer, by steepest descent on the most loaded backend:
 *   1. **replace** (1 new hosting): a slot holding an expert with ≥ 2 replicas gets another
 *      expert instead (the counts change: one expert loses a replica, one gains it) — both
 *      "give a hot expert on the top backend another replica elsewhere" and "drop a replica
 *      from the top backend for a lighter expert";
 *   2. **swap** (2 new hostings): a replica on the top backend trades places with a lighter
 *      replica on another backend (the counts stay).
 *   A move is eligible when every backend it changes ends strictly below the top backend's
 *   load (so the max never rises and the number of backends at the max falls); the move with
 *   the largest drop of the top load per new hosting wins, the cheaper on ties. It stops once
 *   mean ÷ max ≥ `goal`, when no move is eligible, or once the moves made cost `maxMoves`
 *   new hostings (a later move may undo part of an earlier one; `moves` reports the
 *   hostings the result adds to the current placement).
 * - Load model: as {@linkcode planPlacement}'s — an expert's load splits evenly over its
 *   replicas (a backend's load is Σ `w[e] / count[e]` over its slots).
 * - Invariants: every expert keeps ≥ 1 replica (only experts with ≥ 2 give one up); every
 *   backend keeps exactly its slot count (so a memory budget that held the current plan
 *   holds this one); no move puts a second replica of an expert on a backend; the max load
 *   of a layer never rises, so its balancedness never falls.
 * - Knobs: `goal` (balancedness to reach per layer), `maxMoves` (new hostings per layer;
 *   default: the layer's slot count).
 */

/** One layer re-balanced: the new slots, how many hostings changed, and the balancedness. */
export interface IncrementalLayer {
  /** `[slots]`: logical expert of each slot, backend-major (`slotsPerGpu` per backend). */
  phy2log: number[];
  /** Hostings the new placement adds (the weights backends must newly load). */
  moves: number;
  /** Mean ÷ max backend load after the moves (1 when nothing is loaded). */
  balancedness: number;
}

/** Options of {@linkcode rebalanceLayer}. */
export interface RebalanceLayerOptions {
  /** Stop once mean ÷ max backend load is at least this. */
  goal: number;
  /** New hostings allowed; default the layer's slot count. */
  maxMoves?: number;
}

const EPSILON = 1e-12;

/**
 * Moves as few replicas of `current` (`[slots]`, `slotsPerGpu` per backend) as it takes to
 * bring the layer's mean ÷ max load under `weights` to `options.goal`; see the module doc.
 */
export function rebalanceLayer(
  weights: readonly number[],
  current: readonly number[],
  slotsPerGpu: number,
  options: RebalanceLayerOptions,
): IncrementalLayer {
  const state = new LayerState(weights, current, slotsPerGpu);
  const maxMoves = options.maxMoves ?? current.length;
  // The earliest placement with the lowest top load seen: with several backends tied at the
  // top, a move lowers one of them but not the max, and moves that never got the max down
  // would move weights for nothing.
  let best = { slots: Array.from(state.slots), balancedness: state.balancedness() };
  let spent = 0;
  while (spent < maxMoves && state.balancedness() < options.goal) {
    const move = state.bestMove(maxMoves - spent);
    if (move === null) break;
    state.apply(move);
    spent += move.cost;
    const balancedness = state.balancedness();
    if (balancedness > best.balancedness) best = { slots: Array.from(state.slots), balancedness };
  }
  const phy2log = best.slots;
  // A later move may undo part of an earlier one: count the hostings actually added.
  return {
    phy2log,
    moves: hostingsAdded(current, phy2log, slotsPerGpu),
    balancedness: best.balancedness,
  };
}

/**
 * Every layer of `current` re-balanced towards `goal` under `loads` (`[layers][experts]`);
 * layers already at `goal` stay as they are.
 */
export function planIncrementally(
  loads: readonly (readonly number[])[],
  current: readonly (readonly number[])[],
  slotsPerGpu: number,
  options: RebalanceLayerOptions,
): { phy2log: number[][]; moves: number; balancedness: number[] } {
  if (loads.length !== current.length) {
    throw new RangeError(
      `Cannot re-balance: load has ${loads.length} layers, the placement ${current.length}`,
    );
  }
  const layers = loads.map((row, l) => rebalanceLayer(row, current[l]!, slotsPerGpu, options));
  return {
    phy2log: layers.map((layer) => layer.phy2log),
    moves: layers.reduce((sum, layer) => sum + layer.moves, 0),
    balancedness: layers.map((layer) => layer.balancedness),
  };
}

/** Hostings `to` has that `from` lacks, backend by backend (with multiplicity). */
export function hostingsAdded(
  from: readonly number[],
  to: readonly number[],
  slotsPerGpu: number,
): number {
  let added = 0;
  for (let start = 0; start < to.length; start += slotsPerGpu) {
    const had = new Map<number, number>();
    for (let slot = start; slot < start + slotsPerGpu; slot++) {
      had.set(from[slot]!, (had.get(from[slot]!) ?? 0) + 1);
    }
    for (let slot = start; slot < start + slotsPerGpu; slot++) {
      const left = had.get(to[slot]!) ?? 0;
      if (left > 0) had.set(to[slot]!, left - 1);
      else added++;
    }
  }
  return added;
}

/** A candidate move: slot `a` gets expert `toA`; for a swap, slot `b` gets expert `toB`. */
interface Move {
  a: number;
  toA: number;
  b: number;
  toB: number;
  cost: number;
}

/** One layer's slots, replica counts, per-backend copies and loads (mutable). */
class LayerState {
  readonly slots: Int32Array;
  private readonly weights: readonly number[];
  private readonly perGpu: number;
  private readonly gpus: number;
  private readonly experts: number;
  private readonly counts: Int32Array;
  /** `[gpu · experts + expert]`: replicas of the expert on that backend. */
  private readonly copies: Int32Array;
  private readonly loads: Float64Array;
  private readonly total: number;

  constructor(weights: readonly number[], current: readonly number[], perGpu: number) {
    if (!(perGpu >= 1) || current.length % perGpu !== 0) {
      throw new RangeError(
        `Cannot re-balance: ${current.length} slots do not split into backends of ${perGpu}`,
      );
    }
    this.weights = weights;
    this.perGpu = perGpu;
    this.gpus = current.length / perGpu;
    this.experts = weights.length;
    this.slots = Int32Array.from(current);
    this.counts = new Int32Array(this.experts);
    this.copies = new Int32Array(this.gpus * this.experts);
    for (let slot = 0; slot < current.length; slot++) {
      const expert = current[slot]!;
      if (!Number.isInteger(expert) || expert < 0 || expert >= this.experts) {
        throw new RangeError(
          `Cannot re-balance: slot ${slot} holds expert ${expert}, the load has ${this.experts}`,
        );
      }
      this.counts[expert]! += 1;
      this.copies[this.gpuOf(slot) * this.experts + expert]! += 1;
    }
    this.loads = new Float64Array(this.gpus);
    for (let slot = 0; slot < current.length; slot++) {
      this.loads[this.gpuOf(slot)]! += this.perReplica(this.slots[slot]!, 0);
    }
    this.total = weights.reduce((a, b) => a + b, 0);
  }

  balancedness(): number {
    const max = this.max();
    return max <= 0 ? 1 : Math.min(1, this.total / this.gpus / max);
  }

  /** The eligible move with the largest drop of the top load per new hosting, or null. */
  bestMove(budget: number): Move | null {
    const top = this.topGpu();
    const topLoad = this.loads[top]!;
    let best: Move | null = null;
    let bestScore = 0;
    const consider = (move: Move, newMax: number) => {
      if (move.cost > budget || newMax >= topLoad * (1 - EPSILON)) return;
      const score = (topLoad - newMax) / move.cost;
      if (
        score > bestScore * (1 + EPSILON) ||
        (best !== null && score >= bestScore * (1 - EPSILON) && move.cost < best.cost)
      ) {
        best = move;
        bestScore = score;
      }
    };
    const { perGpu, experts, slots } = this;
    const topStart = top * perGpu;
    // Swaps: a replica on the top backend for a lighter one elsewhere (counts unchanged).
    for (let a = topStart; a < topStart + perGpu; a++) {
      const x = slots[a]!;
      const wx = this.perReplica(x, 0);
      for (let b = 0; b < slots.length; b++) {
        const gpu = this.gpuOf(b);
        if (gpu === top) continue;
        const y = slots[b]!;
        if (x === y) continue;
        const delta = wx - this.perReplica(y, 0);
        if (delta <= 0) continue;
        if (this.copies[gpu * experts + x]! > 0 || this.copies[top * experts + y]! > 0) continue;
        const newMax = Math.max(topLoad - delta, this.loads[gpu]! + delta);
        consider({ a, toA: y, b, toB: x, cost: 2 }, newMax);
      }
    }
    // Replacements: any slot whose expert has ≥ 2 replicas gets another expert (1 hosting).
    // Only moves that touch the top backend can lower it: the slot is on it, or the new
    // expert (or the expert given up) has a replica there.
    for (let slot = 0; slot < slots.length; slot++) {
      const donor = slots[slot]!;
      if (this.counts[donor]! < 2) continue;
      const gpu = this.gpuOf(slot);
      for (let receiver = 0; receiver < experts; receiver++) {
        if (receiver === donor || this.copies[gpu * experts + receiver]! > 0) continue;
        if (gpu !== top && this.copies[top * experts + receiver]! === 0) continue;
        const newMax = this.maxAfterReplace(slot, receiver, top, topLoad);
        if (newMax !== null) consider({ a: slot, toA: receiver, b: -1, toB: -1, cost: 1 }, newMax);
      }
    }
    return best;
  }

  apply(move: Move): void {
    this.setSlot(move.a, move.toA);
    if (move.b >= 0) this.setSlot(move.b, move.toB);
  }

  /** Max load over the backends a replacement changes, or null when it does not lower `top`. */
  private maxAfterReplace(slot: number, receiver: number, top: number, topLoad: number) {
    const { experts } = this;
    const gpu = this.gpuOf(slot);
    const donor = this.slots[slot]!;
    const dDonor = this.perReplica(donor, -1) - this.perReplica(donor, 0);
    const dReceiver = this.perReplica(receiver, 1) - this.perReplica(receiver, 0);
    const after = (g: number) => {
      let load = this.loads[g]! + this.copies[g * experts + donor]! * dDonor +
        this.copies[g * experts + receiver]! * dReceiver;
      if (g === gpu) load += this.perReplica(receiver, 1) - this.perReplica(donor, -1);
      return load;
    };
    if (after(top) >= topLoad * (1 - EPSILON)) return null;
    let max = 0;
    for (let g = 0; g < this.gpus; g++) {
      if (
        g === gpu || this.copies[g * experts + donor]! > 0 ||
        this.copies[g * experts + receiver]! > 0
      ) {
        max = Math.max(max, after(g));
        if (max >= topLoad) return null;
      }
    }
    return max;
  }

  private setSlot(slot: number, expert: number): void {
    const old = this.slots[slot]!;
    if (old === expert) return;
    const gpu = this.gpuOf(slot);
    const { experts } = this;
    // Remove the old replica, then add the new one, re-spreading both experts' loads.
    this.spread(old, -this.perReplica(old, 0));
    this.counts[old]! -= 1;
    this.copies[gpu * experts + old]! -= 1;
    this.spread(old, this.perReplica(old, 0));
    this.spread(expert, -this.perReplica(expert, 0));
    this.counts[expert]! += 1;
    this.copies[gpu * experts + expert]! += 1;
    this.spread(expert, this.perReplica(expert, 0));
    this.slots[slot] = expert;
  }

  /** Adds `amount` per replica of `expert` to each backend holding it. */
  private spread(expert: number, amount: number): void {
    if (this.counts[expert]! === 0) return;
    for (let g = 0; g < this.gpus; g++) {
      const copies = this.copies[g * this.experts + expert]!;
      if (copies > 0) this.loads[g]! += copies * amount;
    }
  }

  /** `w[e] / (count[e] + change)`; 0 when that count is 0. */
  private perReplica(expert: number, change: number): number {
    const count = this.counts[expert]! + change;
    return count > 0 ? this.weights[expert]! / count : 0;
  }

  private gpuOf(slot: number): number {
    return Math.floor(slot / this.perGpu);
  }

  private topGpu(): number {
    let top = 0;
    for (let g = 1; g < this.gpus; g++) if (this.loads[g]! > this.loads[top]!) top = g;
    return top;
  }

  private max(): number {
    return this.loads[this.topGpu()]!;
  }
}
