/**
 * @module Re-placement advice: the plan the balancer would apply now (its preview under
 * the observed load), the predicted balancedness before and after, and what moving
 * there costs (replicas and bytes to load). Recommended, as the balancer would act,
 * when the current plan's worst layer is below `expert_balancer.threshold` and the
 * planned one gains at least `minGain` there — useful when the balancer is disabled
 * (operator-driven placement). When not recommended the expected effect lists every
 * reason that holds, so the text never contradicts the numbers beside it. The measured
 * balancedness now (`/api/load`'s pool value and worst layer) is shown first, so the
 * advice names the same numbers as the dashboard header. Pure.
 */
import type { PlanPreview } from "../../control/balancer/balancer_types.ts";
import type { WorstLayer } from "../../control/load/backend_balance.ts";
import type { Advice } from "./advice_types.ts";

/** Inputs of {@linkcode replacementAdvice}. */
export interface ReplacementInputs {
  /** The balancer's preview; `undefined` with `reason` when it cannot plan now. */
  preview: PlanPreview | undefined;
  reason?: string;
  /** Weight bytes of one routed expert (the cost of loading one replica). */
  expertBytes: number;
  /** The balancer's threshold (`expert_balancer.threshold`). */
  threshold: number;
  /** Smallest predicted balancedness gain worth a switch (default 0.05). */
  minGain?: number;
  /** Measured balancedness now (the load aggregate's pool value and worst layer). */
  now?: { balancedness: number; worstLayer: WorstLayer | null } | undefined;
}

/** The measured balancedness evidence line and details, when known. */
function nowParts(now: ReplacementInputs["now"]) {
  if (now === undefined) return { lines: [] as string[], details: {} };
  const worst = now.worstLayer;
  return {
    lines: [
      `balancedness now (measured): ${fixed(now.balancedness)}${
        worst ? ` (worst L${worst.layer} ${fixed(worst.balancedness)})` : ""
      }`,
    ],
    details: {
      balancedness_now: {
        pool: now.balancedness,
        worst_layer: worst &&
          { model: worst.model, layer: worst.layer, balancedness: worst.balancedness },
      },
    },
  };
}

function fixed(value: number | null): string {
  return value === null ? "n/a" : value.toFixed(3);
}

function signed(value: number): string {
  return `${value >= 0 ? "+" : ""}${value.toFixed(3)}`;
}

/** Whether, and why, to re-place experts now. */
export function replacementAdvice(inputs: ReplacementInputs): Advice {
  const title = "Re-place experts (replicate hot experts, repack replicas)";
  const now = nowParts(inputs.now);
  if (inputs.preview === undefined) {
    return {
      id: "replacement",
      title,
      recommended: false,
      evidence: [...now.lines, inputs.reason ?? "the balancer cannot plan yet"],
      expectedEffect: "none until expert load is observed",
      risk: "none",
      apply: "none",
      details: { ...now.details },
    };
  }
  const { current, proposed, moved } = inputs.preview;
  // Judged as the balancer judges: on the worst layer (the pool's value when a preview
  // has no per-layer figures).
  const before = current.worstLayer ?? current.balancedness;
  const after = proposed.worstLayer ?? proposed.balancedness;
  const gain = before === null ? after : after - before;
  const minGain = inputs.minGain ?? 0.05;
  // Every reason not to act that holds, so the text never contradicts the numbers.
  const against = [
    ...(moved > 0 ? [] : ["no replica would move"]),
    ...(gain >= minGain ? [] : [`the gain ${signed(gain)} is below ${minGain}`]),
    ...(before === null || before < inputs.threshold
      ? []
      : [`the worst layer ${fixed(before)} is at or above the threshold ${inputs.threshold}`]),
  ];
  const recommended = against.length === 0;
  const bytes = moved * inputs.expertBytes;
  return {
    id: "replacement",
    title,
    recommended,
    evidence: [
      ...now.lines,
      `current plan v${current.version ?? "none"}: predicted worst-layer balancedness ${
        fixed(before)
      } (pool ${
        fixed(current.balancedness)
      }) under the balancer's short-window expert load (threshold ${inputs.threshold})`,
      `planned placement: predicted worst-layer balancedness ${fixed(after)} (${
        signed(gain)
      }; pool ${fixed(proposed.balancedness)})`,
    ],
    expectedEffect: recommended
      ? `worst-layer balancedness ${fixed(before)} → ${fixed(after)}: the busiest backend's ` +
        `share of that layer's expert work drops, so saturation throughput and tail latency ` +
        `improve by up to ${
          before === null || before <= 0 ? "n/a" : ((after / before - 1) * 100).toFixed(0) + " %"
        }`
      : `no change: ${against.join("; ")}`,
    risk: `${moved} replica(s) to load and warm (${(bytes / 2 ** 20).toFixed(1)} MiB) before an ` +
      "atomic switch; requests keep being served by the current plan until then",
    apply: recommended ? "live" : "none",
    details: {
      ...now.details,
      current_version: current.version,
      balancedness_before: before,
      balancedness_after: after,
      replicas_moved: moved,
      bytes_to_move: bytes,
      phy2log: proposed.phy2log,
    },
  };
}
