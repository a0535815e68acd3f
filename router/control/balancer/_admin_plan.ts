/**
 * @module Admin inputs checked against the model: an operator's `phy2log` turned into a
 * plan for the live pool, and a preview `weight`, with errors that name the field as the
 * operator sent it (`phy2log[1][4]`, not `layers[1].phy2log[4]`).
 */
import { type PlanBackend, planProblem } from "../../../shared/placement_plan.ts";
import type { ModelShape, UnversionedPlan } from "./rebalancer.ts";

/** The plan `phy2log` describes on `backends`, or a message naming what is wrong with it. */
export function planFromPhy2log(
  phy2log: readonly (readonly number[])[],
  options: { model: ModelShape; backends: readonly PlanBackend[]; reason?: string },
): UnversionedPlan | string {
  const { model, backends } = options;
  if (backends.length === 0) return "the pool has no backends";
  if (phy2log.length !== model.layers) {
    return `phy2log has ${phy2log.length} layers, model "${model.name}" has ${model.layers}`;
  }
  const slots = phy2log[0]!.length;
  if (slots === 0 || slots % backends.length !== 0) {
    return `phy2log[0] has ${slots} slots, not a positive multiple of the ${backends.length} backends`;
  }
  for (const [layer, row] of phy2log.entries()) {
    if (row.length !== slots) {
      return `phy2log[${layer}] has ${row.length} slots, phy2log[0] has ${slots}`;
    }
    const bad = row.findIndex((expert) => !Number.isInteger(expert) || expert < 0);
    if (bad >= 0) return `phy2log[${layer}][${bad}] must be an integer ≥ 0, got ${row[bad]}`;
  }
  const plan: UnversionedPlan = {
    model: model.name,
    reason: options.reason ?? "admin apply: operator's phy2log",
    backends: backends.map(({ id, url }) => ({ id, url })),
    slotsPerBackend: slots / backends.length,
    layers: phy2log.map((row) => ({ phy2log: [...row] })),
  };
  const problem = planProblem({ ...plan, version: 1, createdAt: 0 }, model);
  if (problem === null) return plan;
  return problem
    .replace(/layers\[(\d+)\]\.phy2log\[(\d+)\]/, "phy2log[$1][$2]")
    .replace(/layers\[(\d+)\]\.phy2log/, "phy2log[$1]")
    .replace(/layers\[(\d+)\]/, "phy2log[$1]");
}

/** Why `weight` (`[layers][experts]`) does not fit `model`, or null. */
export function weightProblem(
  weight: readonly (readonly number[])[],
  model: ModelShape,
): string | null {
  if (weight.length !== model.layers) {
    return `weight has ${weight.length} layers, model "${model.name}" has ${model.layers}`;
  }
  for (const [layer, row] of weight.entries()) {
    if (row.length !== model.experts) {
      return `weight[${layer}] has ${row.length} experts, model "${model.name}" has ${model.experts}`;
    }
    const bad = row.findIndex((value) => !Number.isFinite(value) || value < 0);
    if (bad >= 0) return `weight[${layer}][${bad}] must be a finite number ≥ 0, got ${row[bad]}`;
  }
  return null;
}
