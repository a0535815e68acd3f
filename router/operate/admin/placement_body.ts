/**
 * @module The `placement` and `health` blocks of `GET /api/plan`, pure: the balancer's last
 * choice between full replication and expert parallelism with its inputs and predictions
 * (`control/balancer/placement_choice.ts`), and the EPLB health
 * (`control/balancer/rebalance_health.ts`), in the API's snake_case.
 */
import type { CandidateCost, PlacementAnalysis } from "../../control/balancer/placement_choice.ts";
import type { HealthSnapshot } from "../../control/balancer/rebalance_health.ts";
import type { CostEstimate } from "../../control/load/cost_window.ts";

/** `placement` of `GET /api/plan`: the decision, its inputs, and what it predicts. */
export function placementBody(analysis: PlacementAnalysis) {
  const { inputs } = analysis;
  return {
    mode: analysis.mode,
    choice: analysis.choice,
    action: analysis.action,
    reason: analysis.reason,
    full_replication_fits: analysis.fits.fullReplication,
    fit_reason: analysis.fits.reason,
    inputs: {
      backends: inputs.backends,
      layers: inputs.layers,
      experts: inputs.experts,
      slots_per_backend: {
        expert_parallel: inputs.slots.expertParallel,
        full_replication: inputs.slots.fullReplication,
      },
      budgets: inputs.budgets.map((b) => ({
        backend: b.backend,
        budget_bytes: b.budgetBytes,
        expert_bytes: b.expertBytes,
        experts_per_layer: b.slots,
      })),
      remote_row_ms: {
        ...estimate(inputs.remoteRow),
        parts: inputs.remoteRow.parts === null ? null : {
          exposed_ms: round(inputs.remoteRow.parts.exposedMs, 6),
          send_cpu_ms: round(inputs.remoteRow.parts.sendCpuMs, 6),
          serve_cpu_ms: round(inputs.remoteRow.parts.serveCpuMs, 6),
        },
      },
      expert_row_ms: estimate(inputs.expertRow),
      load_bytes_per_ms: {
        value: inputs.loadBytesPerMs.value,
        source: inputs.loadBytesPerMs.source,
        detail: inputs.loadBytesPerMs.detail,
      },
      load: inputs.load,
    },
    predicted: {
      current: analysis.current === null ? null : candidate(analysis.current),
      expert_parallel: candidate(analysis.expertParallel),
      full_replication: analysis.fullReplication === null
        ? null
        : candidate(analysis.fullReplication),
      gain: analysis.gain === null ? null : round(analysis.gain, 4),
    },
    move: analysis.move === null ? null : {
      experts: analysis.move.experts,
      bytes: analysis.move.bytes,
      seconds: round(analysis.move.seconds, 3),
      payback_s: analysis.move.paybackS === null ? null : round(analysis.move.paybackS, 3),
    },
  };
}

/** `health` of `GET /api/plan`: EPLB health. */
export function healthBody(health: HealthSnapshot) {
  const now = health.at;
  const due = health.due;
  return {
    rebalances: health.outcomes.map((o) => ({
      outcome: o.outcome,
      trigger: o.trigger,
      count: o.count,
    })),
    last_rebalance_at: health.lastSwitchAt,
    seconds_since_last_rebalance: health.lastSwitchAt === null
      ? null
      : round((now - health.lastSwitchAt) / 1000, 3),
    moved_experts: health.moved.experts,
    moved_bytes: health.moved.bytes,
    switch_duration_s: {
      count: health.durations.count,
      sum: round(health.durations.sumS, 3),
      last: health.durations.lastS === null ? null : round(health.durations.lastS, 3),
    },
    adjust_interval_s: health.adjustIntervalMs / 1000,
    stall_after_s: health.stallAfterMs / 1000,
    due: due === null ? null : {
      since: due.since,
      seconds: round(due.seconds, 3),
      reason: due.reason,
      detail: due.detail,
      worst_layer_balancedness: round(due.worst, 3),
      threshold: due.threshold,
      stalled: due.stalled,
    },
  };
}

function estimate(value: CostEstimate) {
  return {
    value: round(value.ms, 6),
    source: value.source,
    detail: value.detail,
    measured_at: value.at,
  };
}

function candidate(cost: CandidateCost) {
  return {
    kind: cost.kind,
    version: cost.version,
    slots_per_backend: cost.slotsPerBackend,
    busiest_backend_ms_per_s: round(cost.bottleneckMs, 4),
    balancedness: round(cost.balancedness, 4),
    hop_ms_per_s: round(cost.hopMs, 4),
    remote_row_share: round(cost.remoteShare, 4),
  };
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
