/**
 * @module The alert rules, evaluated on one load round: which conditions hold now.
 * Pure over the pool's load, the pool's backend views and the router's recent request
 * latency; hysteresis is applied afterwards ({@linkcode evaluateAlerts}).
 *
 * - `expert_hot`: a routed expert's pool-wide tokens/s over the pool's capacity for it,
 *   `L_e ÷ Σ_{b serving e} (x_{b,e} + (1 − s_b) · X_{b,l} ÷ s_b)` — per replica backend `b`
 *   (tokens/s > 0 there): what it runs for the expert now plus the headroom it has left in
 *   that layer (`X_{b,l}` its expert tokens/s in the layer, `s_b` its saturation, so
 *   `X ÷ s` is its layer capacity, `router/control/load/saturation.ts`) — above
 *   `expertLoadThreshold`, while the expert also carries more than
 *   {@linkcode HOT_EXPERT_MIN_OVER_SHARE} × its replicas' fair share of the layer
 *   (replicas ÷ all replicas). So it fires when the backends holding an over-share expert
 *   run out of room, not on a healthy skewed pool (an equal split of a backend's capacity
 *   per hosted expert fired at 50 % load: a hot expert batches into the same layer
 *   execution and uses the backend's slack). Backends below saturation 0.05 do not count.
 * - `balance_low`: any layer's balancedness (`control/load/backend_balance.ts`: mean ÷ max over
 *   fresh backends of the expert tokens/s each ran in that layer, what placement can even
 *   out; the experts' own skew is the traffic's, and a good plan spreads it) — the value
 *   `/api/load` and `switchyard_layer_balancedness` show — is below `balanceThreshold`
 *   while the layer carries at least
 *   {@linkcode MIN_LAYER_TOKENS_S_PER_EXPERT} tokens/s per expert on average. Not under
 *   full replication: there every backend hosts every expert and the shares follow
 *   entry routing, which no placement can even out.
 * - `backend_down`: a configured backend is unhealthy in the pool, or its load report
 *   is stale or failing (never arrived, last poll failed, or too old).
 * - `latency_slo`: the pool's request latency p99 over `alerts.latency_window` — every
 *   router's answered requests (`operate/requests/pool_latency.ts`; a router without
 *   shared state judges its own) — at least {@linkcode MIN_LATENCY_REQUESTS} of them,
 *   above `latencyP99Ms`.
 * - `shedding`: backends refused (503) more than `shedRatio` of the requests offered to
 *   them, summed over fresh backends.
 * - `saturation`: the pool's saturation (mean of fresh backends) at or above `saturation`.
 * - `rebalance_stalled`: a rebalance due for more than 3 × `adjust_interval` without a
 *   switch, and why it is held (`rebalance_stalled.ts`).
 */
import type { AlertKind } from "./alert_types.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import {
  type AlertSettings,
  HOT_EXPERT_MIN_OVER_SHARE,
  MIN_LAYER_TOKENS_S_PER_EXPERT,
} from "./alert_settings.ts";
import { MIN_SATURATION_FOR_CAPACITY } from "../../control/load/saturation.ts";
import { layerWork } from "../../control/load/backend_balance.ts";
import { type RebalanceReading, rebalanceStalled } from "./rebalance_stalled.ts";

/** The latency SLO needs at least this many answered requests in its window. */
export const MIN_LATENCY_REQUESTS = 20;

/** The pool's recent request latency, for the SLO rule. */
export interface LatencyReading {
  /** p99 of answered requests' latency (ms) over the window. */
  p99Ms: number;
  /** Requests in the window. */
  count: number;
  /** Routers whose requests it covers; default 1 (this router's own). */
  routers?: number;
}

/** A condition that holds in one round. */
export interface AlertCondition {
  /** Stable per condition, e.g. `expert_hot:demo-moe:L0/E3`. */
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

/** Per (model, layer): expert → Σ over serving backends of capacity share; and replicas. */
function expertCapacities(load: PoolLoad, model: string, layer: number, width: number) {
  const capacity = new Array<number>(width).fill(0);
  const replicas = new Array<number>(width).fill(0);
  for (const backend of load.backends) {
    const saturation = backend.saturation?.value;
    if (backend.stale || backend.model !== model || saturation === undefined) continue;
    if (saturation < MIN_SATURATION_FOR_CAPACITY) continue;
    const own = backend.expertLayers?.find((l) => l.layer === layer)?.expertTokensPerS;
    if (own === undefined) continue;
    const total = own.reduce((a, b) => a + b, 0);
    if (!(total > 0)) continue;
    const headroom = (1 - Math.min(1, saturation)) * total / saturation;
    own.forEach((rate, expert) => {
      if (rate > 0 && expert < width) {
        capacity[expert]! += rate + headroom;
        replicas[expert]!++;
      }
    });
  }
  return { capacity, replicas };
}

function hotExperts(load: PoolLoad, settings: AlertSettings): AlertCondition[] {
  const threshold = settings.expertLoadThreshold;
  const conditions: AlertCondition[] = [];
  for (const { model, layers } of load.models) {
    for (const { layer, expertTokensPerS: vector } of layers) {
      const total = vector.reduce((a, b) => a + b, 0);
      if (!(total > 0)) continue;
      const { capacity, replicas } = expertCapacities(load, model, layer, vector.length);
      const allReplicas = replicas.reduce((a, b) => a + b, 0);
      vector.forEach((rate, expert) => {
        const cap = capacity[expert]!;
        if (!(cap > 0) || !(rate > 0)) return;
        const value = rate / cap;
        const fair = replicas[expert]! / allReplicas;
        if (!(value > threshold) || !(rate / total > HOT_EXPERT_MIN_OVER_SHARE * fair)) return;
        const part = `L${layer}/E${expert}`;
        const r = replicas[expert]!;
        conditions.push({
          id: `expert_hot:${model}:${part}`,
          kind: "expert_hot",
          subject: `${model} ${part}`,
          value,
          threshold,
          message: `Expert ${part} of ${model} carries ${Math.round(rate)} tokens/s, ` +
            `${percent(value)} of the pool's capacity for it (${r} replica${r === 1 ? "" : "s"}: ${
              Math.round(cap)
            } tokens/s with their backends' headroom), above ${percent(threshold)}`,
        });
      });
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
      // The backends' shares of this layer's expert work: what placement can even out.
      const perBackend = layerWork(load.backends, model, layer.layer);
      if (perBackend.length < 2) continue;
      const value = layer.balancedness;
      if (!(value < threshold)) continue;
      const b = Math.round(value * 1000) / 1000;
      conditions.push({
        id: `balance_low:${model}:L${layer.layer}`,
        kind: "balance_low",
        subject: `${model} L${layer.layer}`,
        value,
        threshold,
        message: `Layer ${layer.layer} of ${model} has balancedness ${b} ` +
          `(below ${threshold}): ${perBackend.map((v) => Math.round(v)).join(" / ")} ` +
          `expert tokens/s on ${perBackend.length} backends`,
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

function latencySlo(latency: LatencyReading | undefined, settings: AlertSettings) {
  const threshold = settings.latencyP99Ms;
  if (threshold === undefined || latency === undefined) return [];
  if (latency.count < MIN_LATENCY_REQUESTS || !(latency.p99Ms > threshold)) return [];
  const routers = latency.routers ?? 1;
  const over = routers === 1 ? "" : ` of ${routers} routers`;
  return [{
    id: "latency_slo:pool",
    kind: "latency_slo" as const,
    subject: "pool",
    value: latency.p99Ms,
    threshold,
    message: `Request latency p99 is ${Math.round(latency.p99Ms)} ms over the last ` +
      `${latency.count} requests${over}, above the ${threshold} ms objective`,
  }];
}

function shedding(load: PoolLoad, settings: AlertSettings): AlertCondition[] {
  const threshold = settings.shedRatio;
  if (threshold === undefined) return [];
  const fresh = load.backends.filter((b) => !b.stale);
  // Backends' 503s and the router's own 429s (pool at its in-flight limits).
  const shed = fresh.reduce((sum, b) => sum + (b.shedPerS ?? 0), 0) +
    (load.pool.routerShedPerS ?? 0);
  const admitted = fresh.reduce((sum, b) => sum + (b.requestsPerS ?? 0), 0);
  if (!(shed > 0)) return [];
  const share = shed / (shed + admitted);
  if (!(share > threshold)) return [];
  return [{
    id: "shedding:pool",
    kind: "shedding",
    subject: "pool",
    value: share,
    threshold,
    message: `The pool refuses ${percent(share)} of requests (${shed.toFixed(1)}/s shed, ` +
      `${admitted.toFixed(1)}/s admitted), above ${percent(threshold)}`,
  }];
}

function saturation(load: PoolLoad, settings: AlertSettings): AlertCondition[] {
  const threshold = settings.saturation;
  const value = load.pool.saturation;
  if (threshold === undefined || value === undefined || !(value >= threshold)) return [];
  const by = load.backends.filter((b) => !b.stale && b.saturation !== undefined)
    .map((b) => `${b.name} ${b.saturation!.value.toFixed(2)} (${b.saturation!.bottleneck})`);
  return [{
    id: "saturation:pool",
    kind: "saturation",
    subject: "pool",
    value,
    threshold,
    message: `Pool saturation ${value.toFixed(2)} (at or above ${threshold}): ${by.join(", ")}`,
  }];
}

/** Every condition that holds in this round, in rule order. */
export function observeConditions(
  load: PoolLoad,
  views: readonly BackendView[],
  settings: AlertSettings,
  latency?: LatencyReading,
  rebalance?: RebalanceReading,
): AlertCondition[] {
  return [
    ...hotExperts(load, settings),
    ...(rebalance?.fullReplication ? [] : lowBalance(load, settings)),
    ...downBackends(load, views),
    ...latencySlo(latency, settings),
    ...shedding(load, settings),
    ...saturation(load, settings),
    ...rebalanceStalled(rebalance),
  ];
}
