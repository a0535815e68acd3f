/** @module The dashboard's averaging windows over real aggregates of fake reports. */
import assert from "node:assert/strict";
import { oneSecondSample, poolLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { LoadWindow } from "./load_window.ts";

/** A round at `at` where backend-1 ran `a` and backend-2 `b` tokens on L0/E0. */
function round(at: number, a: number, b: number | null) {
  const load = poolLoadOf(
    oneSecondSample("h:1", [[a, 0, 0, 0], [0, 0, 0, 0]]),
    oneSecondSample("h:2", [[b ?? 0, 0, 0, 0], [0, 0, 0, 0]], { stale: b === null }),
  );
  return { ...load, at };
}

Deno.test("LoadWindow averages expert load and backends' work over the rounds in the window", () => {
  const window = new LoadWindow();
  window.record(round(1000, 10, 10));
  window.record(round(2000, 30, 10));
  window.record(round(3000, 20, null)); // backend-2 stale: missing, not zero
  const view = window.view(10_000, 3000);
  assert.equal(view.rounds, 3);
  const l0 = view.models[0]!.layers[0]!;
  assert.deepEqual(l0.expert_tokens_s, [26.667, 0, 0, 0]); // (20 + 40 + 20) ÷ 3 rounds
  // backend-1 mean 20, backend-2 mean 10 (two rounds): mean ÷ max = 15 ÷ 20.
  assert.equal(l0.balancedness, 0.75);
  assert.deepEqual(view.pool.worst_layer, { model: "tiny", layer: 0, balancedness: 0.75 });
  // Layer 1 carried nothing: no balancedness, never 1.
  assert.equal(view.models[0]!.layers[1]!.balancedness, null);
  // The latest 1.5 s only: the last round.
  assert.equal(window.view(1500, 3000).rounds, 2);
  assert.equal(window.view(10_000, 100_000).rounds, 0);
  assert.equal(window.view(10_000, 100_000).pool.balancedness, null);
});
