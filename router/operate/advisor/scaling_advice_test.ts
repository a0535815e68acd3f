import assert from "node:assert/strict";
import { oneSecondSample, poolLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { scalingAdvice } from "./scaling_advice.ts";

Deno.test("scaling advice: more backends under overload, none on a steady pool", () => {
  const overloaded = poolLoadOf(
    oneSecondSample("h:1", [[100, 100, 100, 100], [0, 0, 0, 0]], {
      requests: 20,
      rejected: 40,
      tokens: 80,
      host: { loopLagMs: 300, queueWaitMs: 800, serviceMs: 5 },
    }),
  );
  const up = scalingAdvice(overloaded);
  assert.equal(up.recommended, true);
  assert.equal(up.apply, "none");
  assert.match(
    up.evidence[0]!,
    /^backend-1: saturation \d+ % \((queue|shedding)\), executor busy 2 %/,
  );
  assert.equal(up.expectedEffect, `1 → ${up.details["recommended_backends"]} backends (up)`);
  assert.ok((up.details["recommended_backends"] as number) > 1);
  const steady = poolLoadOf(
    oneSecondSample("h:1", [[1000, 1000, 1000, 1000], [0, 0, 0, 0]], {
      requests: 20,
      tokens: 80,
      host: { loopLagMs: 100, queueWaitMs: 0.2, serviceMs: 5 },
    }),
  );
  const none = scalingAdvice(steady);
  assert.equal(none.recommended, false);
  assert.equal(none.expectedEffect, "no change: 1 backends fit the demand");
  assert.equal(scalingAdvice(undefined).recommended, false);
});
