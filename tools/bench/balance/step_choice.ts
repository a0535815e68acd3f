/**
 * @module The skew step of `bench:balance --phase reaction`: the request type whose
 * experts the plan in force spreads worst over the backends, so the step really
 * unbalances that plan (a fixed type was often already spread by the plan made during
 * the balanced phase: no switch was needed and no reaction could be measured).
 *
 * Design.
 * - Idea: a demo token of type `t` mostly picks `t`'s preferred experts (the generator
 *   aligned their gate columns with `t`'s direction). Under a step to `t`, each layer's
 *   load is those experts' load, shared equally by the backends hosting each of them
 *   (an approximation: the router may weight replicas). A layer's predicted backend
 *   balancedness is mean ÷ max of the backends' shares; a type's score is its worst
 *   layer's. The step takes the type with the lowest score; on a tie the one with the
 *   lowest mean over layers (more layers unbalanced), then the first.
 * - Pure; the bench checks the prediction against the measured per-layer backend
 *   balancedness ({@linkcode measuredLayerBalance}) after the step.
 */
import { balancedness } from "../../../shared/balancedness.ts";

/** One layer of `GET /api/plan`'s `layers`: the experts each backend hosts. */
export interface HostedLayer {
  hosted: { backend: string; experts: number[] }[];
}

/** Per-layer predicted backend balancedness of load on `hot` experts (equal per expert). */
export function stepBalance(
  layers: readonly HostedLayer[],
  hot: readonly (readonly number[])[],
): number[] {
  return layers.map((layer, l) => {
    const shares = layer.hosted.map(() => 0);
    for (const expert of hot[l] ?? []) {
      const hosts = layer.hosted.flatMap((h, b) => h.experts.includes(expert) ? [b] : []);
      for (const b of hosts) shares[b]! += 1 / hosts.length;
    }
    return balancedness(shares);
  });
}

/** The chosen step: its type and its predicted worst layer under the plan in force. */
export interface StepChoice {
  type: string;
  /** Predicted worst-layer backend balancedness of the plan in force under the step. */
  predictedWorst: number;
  /** Every type's predicted worst layer, in the model's type order. */
  scores: { type: string; worst: number; mean: number }[];
}

/**
 * The type whose preferred experts (`preferred[layer][type]`) the plan's `layers` spread
 * worst; null when no type has preferred experts.
 */
export function chooseStep(
  layers: readonly HostedLayer[],
  types: readonly string[],
  preferred: readonly (readonly (readonly number[])[])[],
): StepChoice | null {
  const scores = types.flatMap((type, t) => {
    const hot = preferred.map((layer) => layer[t] ?? []);
    if (hot.every((experts) => experts.length === 0)) return [];
    const perLayer = stepBalance(layers, hot);
    const mean = perLayer.reduce((s, v) => s + v, 0) / perLayer.length;
    return [{ type, worst: Math.min(...perLayer), mean }];
  });
  if (scores.length === 0) return null;
  const best = scores.reduce((a, b) =>
    b.worst < a.worst || (b.worst === a.worst && b.mean < a.mean) ? b : a
  );
  return { type: best.type, predictedWorst: best.worst, scores };
}

/** A backend of `GET /api/load?detail=replicas`. */
export interface ReplicaLoad {
  stale: boolean;
  layers?: { layer: number; expert_tokens_s: number[] }[];
}

/**
 * Measured per-layer backend balancedness: per layer, mean ÷ max over the fresh backends
 * of the routed-expert tokens/s each served; null when no fresh backend reports layers or
 * nothing ran.
 */
export function measuredLayerBalance(backends: readonly ReplicaLoad[]): number[] | null {
  const fresh = backends.filter((b) => !b.stale && (b.layers?.length ?? 0) > 0);
  if (fresh.length === 0) return null;
  const layerCount = Math.max(...fresh.map((b) => b.layers!.length));
  const perLayer: number[] = [];
  let any = false;
  for (let l = 0; l < layerCount; l++) {
    const totals = fresh.map((b) =>
      (b.layers!.find((x) => x.layer === l)?.expert_tokens_s ?? []).reduce((s, v) => s + v, 0)
    );
    if (totals.some((v) => v > 0)) any = true;
    perLayer.push(balancedness(totals));
  }
  return any ? perLayer : null;
}
