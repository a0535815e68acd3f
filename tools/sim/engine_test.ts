import assert from "node:assert/strict";
import { md1MeanWaitMs } from "./devices.ts";
import { PLACEMENT_POLICIES, type SimOptions, simulate } from "./engine.ts";
import { assumed, type DeviceParams } from "./params.ts";
import { buildAffinity, type DayScenario, SCENARIOS, SIM_TYPES } from "./workload.ts";

/** One accelerator, one layer, one expert: a single-server queue with service `fixedMs`. */
function singleServer(fixedMs: number): DeviceParams {
  const p = (value: number) => assumed(value, "", "test");
  return {
    fixedMs: p(fixedMs),
    perRowMs: p(0),
    expertBytes: p(1),
    memoryExperts: p(10),
    rowBytes: p(1),
    linkLatencyMs: p(0),
    intraNodeBytesPerMs: p(1),
    interNodeBytesPerMs: p(1),
    devicesPerNode: p(1),
    weightLoadBytesPerMs: p(1),
  };
}

const flat: DayScenario = {
  name: "flat",
  description: "constant rate, one type",
  diurnal: false,
  phases: [{ startH: 0, mix: { only: 1 } }],
  events: [],
};

function queueOptions(fixedMs: number): SimOptions {
  return {
    seed: 7,
    devices: 1,
    shape: { layers: 1, experts: 1, topK: 1, groups: 1, topkGroup: 1 },
    device: singleServer(fixedMs),
    types: ["only"],
    affinity: [[[[1]]]],
    scenario: flat,
    policy: "static",
    dayS: 1,
    peakRatePerS: 1,
    rowsMin: 1,
    rowsMax: 1,
    sloMs: 1e9,
    queueLimit: 1e9,
    batching: { min: 1, max: 1, maxWaitMs: 0, latencyBudgetMs: 1e9 },
    routing: "round_robin",
    balancer: {
      threshold: 0.75,
      adjustIntervalMs: 60_000,
      windowMs: 60_000,
      redundancy: 0,
      evaluateIntervalMs: 2_000,
      detectWindowMs: 5_000,
      switchGain: 0.15,
      loadRoundMs: 1_000,
    },
    prewarm: {
      horizonMs: 900_000,
      threshold: 0.8,
      leadTimeMs: 3_600_000,
      maxBackends: 1,
      everyMs: 60_000,
    },
    eplbEveryMs: 600_000,
    sglangEverySteps: 1000,
    overlap: false,
    noise: false,
  };
}

Deno.test("one server, fixed arrivals: the queueing delay is the hand-computed one", async () => {
  // Arrivals at 0, 1, 2, 3 ms, service 2 ms: starts 0, 2, 4, 6 → waits 0, 1, 2, 3.
  const result = await simulate({
    ...queueOptions(2),
    arrivals: [0, 1, 2, 3].map((at) => ({ at, rows: 1, type: 0 })),
  });
  assert.equal(result.completed, 4);
  assert.equal(result.meanWaitMs, 1.5);
  assert.equal(result.p50Ms, 3); // latencies 2, 3, 4, 5
  assert.equal(result.p99Ms, 5);
  assert.equal(result.steps, 4);
  assert.equal(result.shed, 0);
});

Deno.test("one server, Poisson arrivals: mean wait within 10 % of M/D/1", async () => {
  const rate = 0.7; // per ms, service 1 ms → ρ = 0.7
  const result = await simulate({ ...queueOptions(1), dayS: 200, peakRatePerS: rate * 1000 });
  const expected = md1MeanWaitMs(rate, 1);
  assert.ok(
    Math.abs(result.meanWaitMs - expected) / expected < 0.1,
    `mean wait ${result.meanWaitMs} vs M/D/1 ${expected}`,
  );
  assert.ok(result.completed > 100_000);
});

const small = {
  shape: { layers: 2, experts: 16, topK: 2, groups: 4, topkGroup: 2 },
  affinity: buildAffinity({ layers: 2, experts: 16, topK: 2, groups: 4, topkGroup: 2 }, {
    seed: 3,
    types: SIM_TYPES,
    zipf: 1,
    epochs: 3,
    driftSwap: 0.1,
    gateTokens: 32,
    stormTypes: ["storm"],
  }),
};

function smallOptions(scenario: DayScenario, policy: SimOptions["policy"], seed = 1): SimOptions {
  const base = queueOptions(0.2);
  return {
    ...base,
    seed,
    devices: 4,
    shape: small.shape,
    device: { ...base.device, perRowMs: assumed(0.01, "", "test") },
    types: SIM_TYPES,
    affinity: small.affinity,
    scenario,
    policy,
    dayS: 4,
    peakRatePerS: 1500,
    rowsMin: 1,
    rowsMax: 16,
    sloMs: 100,
    queueLimit: 256,
    batching: { min: 2, max: 16, maxWaitMs: 2, latencyBudgetMs: 50 },
    routing: "p2c",
    balancer: { ...base.balancer, threshold: 0.9, redundancy: 0.25 },
    noise: true,
  };
}

Deno.test("the same seed gives the same run; another seed another", async () => {
  const strip = ({ plannerMs: _p, ...rest }: Awaited<ReturnType<typeof simulate>>) => rest;
  const a = await simulate(smallOptions(SCENARIOS.day!, "switchyard"));
  const b = await simulate(smallOptions(SCENARIOS.day!, "switchyard"));
  const c = await simulate(smallOptions(SCENARIOS.day!, "switchyard", 2));
  assert.deepEqual(strip(a), strip(b));
  assert.notDeepEqual(strip(a), strip(c));
});

for (const scenario of Object.values(SCENARIOS)) {
  Deno.test(`smoke: scenario ${scenario.name} under every placement policy`, async () => {
    for (const policy of PLACEMENT_POLICIES) {
      const r = await simulate(smallOptions(scenario, policy));
      assert.ok(r.completed > 0, `${policy}: nothing completed`);
      assert.equal(r.completed + r.shed <= r.arrived, true);
      for (const b of r.balancedness) assert.ok(b === null || (b > 0 && b <= 1 + 1e-9), `${b}`);
      assert.equal(r.hourly.length, 24);
      if (policy === "static") assert.equal(r.switches, 0);
      if (policy === "eplb") assert.ok(r.switches > 0, "EPLB never re-placed");
      if (scenario.events.some((e) => e.multiplier > 1)) assert.notEqual(r.event, null);
    }
  });
}

/**
 * One layer, 4 experts on 2 accelerators (2 slots each, no spare), top-1. Type a loads
 * experts 0 and 1: the static plan ({0, 1} / {2, 3}) gives worst layer 0.5 ÷ 0.8 = 0.625.
 * At 12:00 the mix becomes type b, which loads 0 and 3: bad on the plan the balancer moves
 * to for a ({1, 2} / {0, 3}: one swap from the static plan, the fewest replicas moved).
 * 100 evaluations and 200 load rounds per day.
 */
function cadenceOptions(balancer: Partial<SimOptions["balancer"]>): SimOptions {
  const base = queueOptions(0.05);
  const dayMs = 86_400_000;
  return {
    ...base,
    devices: 2,
    shape: { layers: 1, experts: 4, topK: 1, groups: 1, topkGroup: 1 },
    // Fast links: the pool keeps up, so the load observed is the load offered.
    device: { ...base.device, interNodeBytesPerMs: assumed(1e9, "", "test") },
    types: ["a", "b"],
    affinity: [[[[0.4, 0.4, 0.1, 0.1]]], [[[0.4, 0.1, 0.1, 0.4]]]],
    scenario: {
      name: "shift",
      description: "a, then b from 12:00",
      diurnal: false,
      phases: [{ startH: 0, mix: { a: 1 } }, { startH: 12, mix: { b: 1 } }],
      events: [],
    },
    policy: "switchyard",
    dayS: 2,
    peakRatePerS: 2000,
    rowsMin: 4,
    rowsMax: 4,
    batching: { min: 1, max: 8, maxWaitMs: 0, latencyBudgetMs: 1e9 },
    trace: true,
    balancer: {
      ...base.balancer,
      evaluateIntervalMs: dayMs / 100,
      loadRoundMs: dayMs / 200,
      detectWindowMs: dayMs / 400,
      adjustIntervalMs: dayMs,
      ...balancer,
    },
  };
}

Deno.test("balancer cadence: the trigger confirms before the first switch; the hold keeps the plan", async () => {
  const r = await simulate(cadenceOptions({ switchGain: 0.5 }));
  assert.equal(r.trace.length, 100, "one evaluation per evaluate_interval");
  const outcomes = r.trace.map((t) => t.outcome);
  // Evaluation 1 sees the static plan at 0.625 < 0.75: confirming; evaluation 2 arms and switches.
  assert.equal(r.trace[0]!.worst, 0.625);
  assert.equal(outcomes[0], "confirming");
  assert.equal(outcomes[1], "switch");
  assert.equal(r.trace[1]!.after, 1);
  // After 12:00 type b is as bad on the new plan, but the last switch is < adjust_interval
  // (a day) ago and a gain of at most 0.375 < switch_gain 0.5: held, never switched.
  const afternoon = r.trace.filter((t) => t.hour >= 12.5);
  assert.ok(afternoon.length > 40);
  for (const t of afternoon) {
    assert.ok(Math.abs(t.worst! - 0.625) < 1e-3 && t.outcome === "held", `${outcomes}`);
  }
  assert.equal(r.switches, 1);
  assert.equal(r.evaluations.switch, 1);
});

Deno.test("balancer cadence: a gain ≥ switch_gain switches within adjust_interval", async () => {
  const r = await simulate(cadenceOptions({ switchGain: 0.3 }));
  assert.equal(r.switches, 2);
  assert.equal(r.evaluations["switch (gain ≥ switch_gain)"], 1);
  const second = r.trace.find((t) => t.outcome === "switch (gain ≥ switch_gain)")!;
  assert.ok(second.hour >= 12, `${second.hour}`);
});

Deno.test("pre-warm: the plan it stages activates after its weight loads, not at a day-time clock", async () => {
  // The pre-warm job stages a plan for the 20:00 event during the 60-min lead window. The
  // switch stages for the weights' load time (milliseconds here), so the balancer is held off
  // for at most a few of its 100 evaluations a day, never for the hours until day end.
  const r = await simulate({
    ...smallOptions(SCENARIOS.event!, "switchyard-prewarm"),
    trace: true,
    balancer: {
      ...smallOptions(SCENARIOS.event!, "switchyard").balancer,
      evaluateIntervalMs: 864_000,
    },
  });
  assert.ok(r.switches > 0, "pre-warm never staged a plan");
  const staging = r.trace.filter((t) => t.outcome === "staging");
  assert.ok(staging.length <= 2, `staging at hours ${staging.map((t) => t.hour.toFixed(1))}`);
});
