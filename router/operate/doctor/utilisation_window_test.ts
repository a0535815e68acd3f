import assert from "node:assert/strict";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import { backendLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { UtilisationWindow } from "./utilisation_window.ts";

function round(at: number, utilisation: number[], tokensPerS: number): PoolLoad {
  return {
    at,
    models: [],
    pool: {
      reporting: utilisation.length,
      balancedness: 1,
      utilisationBalancedness: 1,
      utilisationCv: 0,
    },
    backends: utilisation.map((u, i) => backendLoadOf({ id: `b${i}`, utilisation: u, tokensPerS })),
  };
}

Deno.test("UtilisationWindow averages busy rounds only, within the window", () => {
  const window = new UtilisationWindow(60_000);
  assert.equal(window.mean(0), undefined);
  window.record(round(1000, [0.2, 0.4], 100)); // mean 0.3
  window.record(round(2000, [0.6, 0.6], 100)); // mean 0.6
  window.record(round(3000, [0, 0], 0)); // idle: not a sample
  assert.ok(Math.abs(window.mean(3000)! - 0.45) < 1e-12);
  // A minute later the busy rounds have left the window.
  window.record(round(70_000, [0, 0], 0));
  assert.equal(window.mean(70_000), undefined);
});

Deno.test("UtilisationWindow: a minute of overload in ten is the 90th percentile, and it shed", () => {
  const window = new UtilisationWindow(600_000);
  for (let s = 0; s < 540; s++) window.record({ ...round(s * 1000, [0.1, 0.1], 100) });
  for (let s = 540; s < 600; s++) {
    const load = round(s * 1000, [0.2, 0.2], 100);
    window.record({ ...load, pool: { ...load.pool, saturation: 0.97, routerShedPerS: 900 } });
  }
  const means = window.means(600_000)!;
  assert.equal(means.saturationP90, 0.97);
  assert.ok(Math.abs(means.shedShare - 0.1) < 1e-9);
});
