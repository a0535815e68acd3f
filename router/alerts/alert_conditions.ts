/**
 * @module The alert rules, evaluated on one load round: which conditions hold now.
 * Pure over the pool's load and the pool's backend views; hysteresis is applied
 * afterwards ({@linkcode evaluateAlerts}).
 *
 * - `expert_hot`: on a fresh backend, a routed expert's device time per second over
 *   the backend's executor capacity, `busyMsPerS ÷ (1000 · slots)`, is above
 *   `expertLoadThreshold`. One condition per (backend, layer, expert).
 * - `balance_low`: a layer's balancedness (pool-wide expert tokens/s) is below
 *   `balanceThreshold` while the layer carries at least
 *   {@linkcode MIN_LAYER_TOKENS_S_PER_EXPERT} tokens/s per expert on average.
 * - `backend_down`: a configured backend is unhealthy in the pool, or its load report
 *   is stale or failing (never arrived, last poll failed, or too old).
 */
import type { AlertKind } from "./alert_types.ts";
import type { BackendView } from "../pool/backend_view.ts";
import type { PoolLoad } from "../load/pool_load.ts";
import { type AlertSettings, MIN_LAYER_TOKENS_S_PER_EXPERT } from "./alert_settings.ts";

/** A condition that holds in one round. */
export interface AlertCondition {
  /** Stable per condition, e.g. `expert_hot:backend-1:L0/E3`. */
  id: string;
  kind: AlertKind;
  subject: string;
  value: number;
  threshold: number;
  message: string;
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

function hotExperts(load: PoolLoad, settings: AlertSettings): AlertCondition[] {
  const threshold = settings.expertLoadThreshold;
  const conditions: AlertCondition[] = [];
  for (const backend of load.backends) {
    if (backend.stale || backend.slots === undefined) continue;
    const capacityMsPerS = 1000 * backend.slots;
    for (const { layer, expertBusyMsPerS } of backend.expertLayers ?? []) {
      for (const [expert, busyMsPerS] of expertBusyMsPerS.entries()) {
        const share = busyMsPerS / capacityMsPerS;
        if (!(share > threshold)) continue;
        const part = `L${layer}/E${expert}`;
        conditions.push({
          id: `expert_hot:${backend.name}:${part}`,
          kind: "expert_hot",
          subject: `${backend.name} ${part}`,
          value: share,
          threshold,
          message: `Expert ${part} uses ${percent(share)} of ${backend.name}'s executor ` +
            `capacity (${backend.slots} slot${backend.slots === 1 ? "" : "s"}), above ` +
            `${percent(threshold)}`,
        });
      }
    }
  }
  return conditions;
}

function lowBalance(load: PoolLoad, settings: AlertSettings): AlertCondition[] {
  const threshold = settings.balanceThreshold;
  const perExpert = settings.minLayerTokensPerSPerExpert ?? MIN_LAYER_TOKENS_S_PER_EXPERT;
  const conditions: AlertCondition[] = [];
  for (const { model, layers } of load.models) {
    for (const layer of layers) {
      const vector = layer.expertTokensPerS;
      const total = vector.reduce((sum, rate) => sum + rate, 0);
      // Too little traffic to judge the spread (an idle pool never alerts).
      if (vector.length === 0 || total < perExpert * vector.length) continue;
      if (!(layer.balancedness < threshold)) continue;
      const b = Math.round(layer.balancedness * 1000) / 1000;
      conditions.push({
        id: `balance_low:${model}:L${layer.layer}`,
        kind: "balance_low",
        subject: `${model} L${layer.layer}`,
        value: layer.balancedness,
        threshold,
        message: `Layer ${layer.layer} of ${model} has balancedness ${b} ` +
          `(below ${threshold}) at ${Math.round(total)} expert tokens/s`,
      });
    }
  }
  return conditions;
}

function downBackends(load: PoolLoad, views: readonly BackendView[]): AlertCondition[] {
  const loads = new Map(load.backends.map((backend) => [backend.id, backend]));
  const conditions: AlertCondition[] = [];
  for (const view of views) {
    const report = loads.get(view.id);
    const reportFailing = report === undefined || report.stale;
    if (view.healthy && !reportFailing) continue;
    const reasons = [
      ...(view.healthy ? [] : [`unhealthy (${view.lastError ?? "no health check passed yet"})`]),
      ...(reportFailing
        ? [`load report ${report?.error ? `failing (${report.error})` : "stale"}`]
        : []),
    ];
    conditions.push({
      id: `backend_down:${view.id}`,
      kind: "backend_down",
      subject: view.name,
      value: 0,
      threshold: 1,
      message: `Backend ${view.name} (${view.id}) is down: ${reasons.join("; ")}`,
    });
  }
  return conditions;
}

/** Every condition that holds in this round, in rule order. */
export function observeConditions(
  load: PoolLoad,
  views: readonly BackendView[],
  settings: AlertSettings,
): AlertCondition[] {
  return [
    ...hotExperts(load, settings),
    ...lowBalance(load, settings),
    ...downBackends(load, views),
  ];
}
