import assert from "node:assert/strict";
import { oneSecondSample, poolLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { backendCapacitySamples, backendSaturationSamples } from "./signal_metrics.ts";

Deno.test("saturation and capacity samples: fresh backends only, labelled with the bottleneck", () => {
  const load = poolLoadOf(
    oneSecondSample("h:1", [[1000, 1000, 1000, 1000], [0, 0, 0, 0]], {
      requests: 10,
      tokens: 120,
      host: { loopLagMs: 600, queueWaitMs: 1, serviceMs: 4 },
    }),
    oneSecondSample("h:2", [[1, 1, 1, 1], [1, 1, 1, 1]], { stale: true }),
  );
  assert.deepEqual(backendSaturationSamples(load), [
    { labels: { backend: "backend-1", bottleneck: "host" }, value: 0.6 },
  ]);
  // 120 tokens/s at saturation 0.6 (host-bound): 200 tokens/s, extrapolated.
  assert.deepEqual(backendCapacitySamples(load), [{
    labels: { backend: "backend-1" },
    value: 200,
  }]);
});
