import assert from "node:assert/strict";
import type { PoolLoad } from "../../router/control/load/pool_load.ts";
import { observedLoad } from "./reactive_balancer.ts";

function snapshot(rows: number[][]): PoolLoad {
  return {
    at: 1,
    backends: [],
    models: [{
      model: "m",
      layers: rows.map((expertTokensPerS, layer) => ({
        layer,
        expertTokensPerS,
        balancedness: 1,
        expertSkew: { top10Share: 0, cv: 0 },
      })),
    }],
    pool: { reporting: 1, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
  };
}

Deno.test("observedLoad prefers the EWMA when every layer has one", () => {
  const ewma = new Map([[0, [5, 5]], [1, [7, 1]]]);
  const loads = observedLoad("m", snapshot([[1, 2], [3, 4]]), (_m, l) => ewma.get(l));
  assert.deepEqual(loads, [[5, 5], [7, 1]]);
});

Deno.test("observedLoad falls back to the latest rates when a layer has no EWMA yet", () => {
  const loads = observedLoad(
    "m",
    snapshot([[1, 2], [3, 4]]),
    (_m, l) => l === 0 ? [9, 9] : undefined,
  );
  assert.deepEqual(loads, [[1, 2], [3, 4]]);
});

Deno.test("observedLoad is null for a model the snapshot does not hold", () => {
  assert.equal(observedLoad("other", snapshot([[1, 2]]), () => undefined), null);
});
