import assert from "node:assert/strict";
import { fakeRun } from "./_fake_run.ts";
import { outcomeOf } from "./outcome.ts";
import { demoTarget, itemTargets } from "./targets.ts";

const SLO = 50;

function bench() {
  return [1, 2].flatMap((seed) => [
    // static: 1000 requests at saturation; at 0.9× half its requests miss the SLO.
    fakeRun({
      config: "static",
      seed,
      saturated: 1000,
      sweep: { "0.7": [700, 40], "0.9": [900, 60], "1.1": [1100, 90] },
      shift: [2000, 60],
      backendCv: 0.6,
    }),
    fakeRun({
      config: "eplb-10min",
      seed,
      saturated: 1300,
      sweep: { "0.7": [700, 30], "0.9": [900, 40], "1.1": [1100, 45] },
      shift: [2000, 55],
      backendCv: 0.3,
    }),
    fakeRun({
      config: "switchyard",
      seed,
      saturated: seed === 1 ? 1500 : 1300,
      sweep: { "0.7": [700, 20], "0.9": [900, 30], "1.1": [1100, 40] },
      shift: [2000, 30],
      backendCv: 0.25,
    }),
  ]).map((run) => outcomeOf(run, SLO));
}

Deno.test("itemTargets() takes each target as a per-seed ratio and judges its mean", () => {
  const rows = itemTargets(bench());
  const [saturation, half, p99, cv, vsEplb] = rows;
  assert.deepEqual(saturation!.perSeed, [1.5, 1.3]);
  assert.equal(saturation!.ratio.mean, 1.4);
  assert.equal(saturation!.met, true);
  assert.equal(saturation!.seedsMet, 1);
  // Static attains 0 % at 0.9× and 1.1× (60, 90 ms > 50) and 100 % at 0.7×: no rate is
  // near 50 %, the closest is taken and the row says so.
  assert.match(half!.detail, /far from 50 %/);
  assert.equal(p99!.ratio.mean, 0.5);
  assert.equal(p99!.met, true);
  assert.ok(Math.abs(cv!.ratio.mean - 0.25 / 0.6) < 1e-9);
  assert.equal(cv!.met, true);
  // Shift goodput: switchyard all good (30 ms), eplb none (55 ms > 50): eplb's goodput is
  // 0, so no ratio can be taken.
  assert.equal(vsEplb!.ratio.n, 0);
  assert.equal(vsEplb!.met, null);
});

Deno.test("itemTargets() marks a target n/a when the sweep lacks its rate", () => {
  const runs = [
    fakeRun({ config: "static", seed: 1, saturated: 100, sweep: { "0.5": [50, 10] } }),
    fakeRun({ config: "switchyard", seed: 1, saturated: 100, sweep: { "0.5": [50, 10] } }),
  ].map((run) => outcomeOf(run, SLO));
  const p99 = itemTargets(runs)[2]!;
  assert.equal(p99.met, null);
  assert.match(p99.detail, /0\.7 is not among the swept rates/);
});

Deno.test("demoTarget() compares switchyard with the better of replicate-all and static", () => {
  const runs = [
    fakeRun({ config: "static", seed: 1, saturated: 900 }),
    fakeRun({ config: "replicate-all", seed: 1, saturated: 1000 }),
    fakeRun({ config: "switchyard", seed: 1, saturated: 960 }),
  ].map((run) => outcomeOf(run, SLO));
  const row = demoTarget(runs);
  assert.deepEqual(row.perSeed, [0.96]);
  assert.equal(row.goal, "≥ 0.95×");
  assert.equal(row.met, true);
});
