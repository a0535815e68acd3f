import assert from "node:assert/strict";
import { silentLogger } from "../../../shared/logger.ts";
import { staticPlan } from "../../../shared/placement_plan.ts";
import type { PoolLoad } from "../load/pool_load.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { backendLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { PlanStore } from "./plan_store.ts";
import { ReplicaWeightsPusher } from "./replica_weights_pusher.ts";

function loadOf(utilisation: Record<string, number | undefined>): PoolLoad {
  return {
    at: 0,
    models: [],
    pool: { reporting: 0, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
    backends: Object.entries(utilisation).map(([name, u]) =>
      backendLoadOf({ id: name, stale: u === undefined, utilisation: u })
    ),
  };
}

Deno.test("ReplicaWeightsPusher sends headroom weights for the current plan, throttled", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const store = new PlanStore(kv);
    const plan = staticPlan({
      model: "m",
      layers: 1,
      experts: 4,
      backends: [{ id: "b1", url: "http://b1:1" }, { id: "b2", url: "http://b2:1" }],
      slotsPerBackend: 2,
      version: 1,
    });
    await store.save(plan);
    assert.ok(await store.setCurrent("m", 1, null));
    const calls: {
      url: string;
      body: { version: number; weights: number[][] };
      auth: string | null;
    }[] = [];
    const clock = new ManualClock(0);
    const pusher = new ReplicaWeightsPusher({
      store,
      clock,
      logger: silentLogger,
      internalToken: "internal-token-0123456789",
      everyMs: 5000,
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        calls.push({
          url: String(input),
          body: JSON.parse(String(init?.body)),
          auth: headers.get("authorization"),
        });
        return Promise.resolve(new Response("{}", { status: 200 }));
      },
    });
    await pusher.onLoad(loadOf({ b1: 0.9, b2: 0.2 }), "m");
    assert.deepEqual(calls.map((c) => c.url).sort(), [
      "http://b1:1/v2/plan/weights",
      "http://b2:1/v2/plan/weights",
    ]);
    assert.equal(calls[0]!.body.version, 1);
    assert.deepEqual(calls[0]!.body.weights[0]!.map((w) => Math.round(w * 10) / 10), [
      0.1,
      0.1,
      0.8,
      0.8,
    ]);
    assert.equal(calls[0]!.auth, "Bearer internal-token-0123456789");
    // Throttled: nothing within 5 s, again after.
    await pusher.onLoad(loadOf({ b1: 0.5, b2: 0.5 }), "m");
    assert.equal(calls.length, 2);
    await clock.advance(5000);
    await pusher.onLoad(loadOf({ b1: 0.5, b2: 0.5 }), "m");
    assert.equal(calls.length, 4);
    // Without fresh measurements nothing is sent.
    await clock.advance(5000);
    await pusher.onLoad(loadOf({ b1: undefined, b2: undefined }), "m");
    assert.equal(calls.length, 4);
  } finally {
    kv.close();
  }
});
