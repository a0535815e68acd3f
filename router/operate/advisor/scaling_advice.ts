/**
 * @module Scaling advice from the load signal (`router/control/load/saturation.ts`): the pool's
 * saturation per backend, what bottleneck set it, the capacity estimate and the scaling
 * rule's recommendation. Informational (`apply: none`): the pre-warm job's scaler or the
 * operator adds or removes backends. Pure; the texts are built from the same numbers the
 * details carry, so they cannot disagree.
 */
import type { PoolLoad } from "../../control/load/pool_load.ts";
import type { Advice } from "./advice_types.ts";

function percent(value: number): string {
  return `${Math.round(value * 100)} %`;
}

/** The scaling advice for `load`. */
export function scalingAdvice(load: PoolLoad | undefined): Advice {
  const title = "Scale the pool (backends) to the measured demand";
  const scale = load?.pool.scale;
  const fresh = load?.backends.filter((b) => !b.stale && b.saturation !== undefined) ?? [];
  if (load === undefined || scale === undefined || fresh.length === 0) {
    return {
      id: "scaling",
      title,
      recommended: false,
      evidence: ["no backend reports the load signal yet"],
      expectedEffect: "none until load reports arrive",
      risk: "none",
      apply: "none",
      details: {},
    };
  }
  const recommended = scale.direction !== "none";
  const capacity = load.pool.capacityPerBackend;
  return {
    id: "scaling",
    title,
    recommended,
    evidence: [
      ...fresh.map((b) =>
        `${b.name}: saturation ${percent(b.saturation!.value)} (${b.saturation!.bottleneck}), ` +
        `executor busy ${percent(b.saturation!.deviceBusy)}, ${
          (b.tokensPerS ?? 0).toFixed(1)
        } tokens/s, ${(b.shedPerS ?? 0).toFixed(1)} requests/s shed`
      ),
      `capacity per backend: ${
        capacity === undefined ? "unknown" : `${capacity.toFixed(1)} tokens/s`
      }; ${scale.reason}`,
    ],
    expectedEffect: recommended
      ? `${scale.backends} → ${scale.recommended} backends (${scale.direction})`
      : `no change: ${scale.backends} backends fit the demand`,
    risk: scale.direction === "down"
      ? "less headroom for bursts; the balancer re-plans on the smaller pool"
      : scale.direction === "up"
      ? "new backends load the model and join after their first health check"
      : "none",
    apply: "none",
    details: {
      backends: scale.backends,
      recommended_backends: scale.recommended,
      direction: scale.direction,
      demand: scale.demand,
      pool_saturation: load.pool.saturation ?? null,
      capacity_tokens_s_per_backend: capacity ?? null,
    },
  };
}
