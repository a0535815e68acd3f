/**
 * @module The `eplb-10min` configuration's planner step, pure: DeepSeek's greedy EPLB
 * (`router/control/balancer/eplb_greedy.ts`, a port of `eplb.py`) on one window's expert
 * load, as the `phy2log` the router's admin API applies. One node (every backend on one
 * host); the expert groups go to `num_groups` when they divide the experts, so the
 * hierarchical policy packs groups first, as eplb.py does when groups divide nodes.
 */
import { greedyPlacement } from "../../../router/control/balancer/eplb_greedy.ts";

/** The pool shape EPLB places replicas on. */
export interface EplbShape {
  backends: number;
  /** Expert slots per layer per backend (the plan's `slots_per_backend`). */
  slotsPerBackend: number;
  /** Expert groups of the model (1 when none). */
  groups: number;
}

/** A greedy EPLB placement of `weight` (`[layers][experts]` tokens), or null when no load. */
export function eplbPhy2log(
  weight: readonly (readonly number[])[],
  shape: EplbShape,
): { phy2log: number[][]; balancedness: number } | null {
  if (!weight.some((row) => row.some((v) => v > 0))) return null;
  const experts = weight[0]?.length ?? 0;
  const plan = greedyPlacement({
    weight: weight.map((row) => [...row]),
    num_replicas: shape.backends * shape.slotsPerBackend,
    num_groups: shape.groups > 0 && experts % shape.groups === 0 ? shape.groups : 1,
    num_nodes: 1,
    num_gpus: shape.backends,
  });
  const mean = plan.balancedness.reduce((a, b) => a + b, 0) / plan.balancedness.length;
  return { phy2log: plan.phy2log, balancedness: mean };
}
