import assert from "node:assert/strict";
import type { BackendLoad, PoolLoad } from "../../control/load/pool_load.ts";
import { backendLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { doctorInputs, type DoctorSources } from "./doctor_inputs.ts";
import { doctorRoutes } from "./doctor_routes.ts";

function backend(id: string, utilisation: number, tokensPerS: number, stale = false): BackendLoad {
  return backendLoadOf({ id, utilisation, tokensPerS, stale, requestsPerS: 1, slots: 2 });
}

const load: PoolLoad = {
  at: 0,
  backends: [backend("a", 0.2, 600), backend("b", 0.4, 400), backend("c", 0.99, 9999, true)],
  models: [{
    model: "m",
    layers: [
      // 10 experts: the top one carries 0.75 of the load.
      {
        layer: 0,
        expertTokensPerS: [96, ...Array(9).fill(32 / 9)],
        balancedness: 0,
        expertSkew: { top10Share: 0, cv: 0 },
      },
      // Even: the top one of 10 carries 0.1.
      {
        layer: 1,
        expertTokensPerS: Array(10).fill(5),
        balancedness: 1,
        expertSkew: { top10Share: 0, cv: 0 },
      },
      // Idle layers do not dilute the share.
      {
        layer: 2,
        expertTokensPerS: Array(10).fill(0),
        balancedness: 1,
        expertSkew: { top10Share: 0, cv: 0 },
      },
    ],
  }],
  pool: { reporting: 2, balancedness: 0.75, utilisationBalancedness: 0.75, utilisationCv: 0.3 },
};

function sources(overrides: Partial<DoctorSources> = {}): DoctorSources {
  return {
    experts: () => 10,
    load: () => load,
    requests: {
      latencyCv: () => 0.42,
      tokensPerS: () => 7,
      volume: () => ({ requests: 500, spanMs: 120_000 }),
    },
    ...overrides,
  };
}

Deno.test("doctorInputs() reads fresh backends, non-idle layers and the pool token rate", () => {
  const inputs = doctorInputs(sources(), 0);
  assert.equal(inputs.experts, 10);
  assert.ok(Math.abs(inputs.utilisation! - 0.3) < 1e-12);
  assert.equal(inputs.latencyCv, 0.42);
  assert.ok(Math.abs(inputs.top10Share! - (0.75 + 0.1) / 2) < 1e-12);
  assert.equal(inputs.tokensPerS, 1000);
});

Deno.test("doctorInputs() falls back to this router's rate and prefers the smoothed load", () => {
  const idle = { ...load, backends: [backend("a", 0, 0)] };
  const inputs = doctorInputs(
    sources({ load: () => idle, ewma: (_m, layer) => layer === 1 ? [1, 0, 0, 0] : undefined }),
    0,
  );
  assert.equal(inputs.tokensPerS, 7);
  // Layer 1's smoothed vector puts everything on one expert.
  assert.ok(Math.abs(inputs.top10Share! - (0.75 + 1) / 2) < 1e-12);
});

Deno.test("GET /api/doctor answers the checklist with values and a verdict", async () => {
  const app = doctorRoutes({ sources: sources(), clock: { now: () => 5 } });
  const body = await (await app.request("/api/doctor")).json();
  assert.equal(body.at, 5);
  assert.deepEqual(
    body.checks.map((c: { id: string; answer: string }) => [c.id, c.answer]),
    [
      ["experts", "no"],
      ["utilisation", "yes"],
      ["latency_variation", "yes"],
      ["hot_experts", "no"],
      ["tokens_per_day", "no"],
    ],
  );
  assert.equal(body.verdict, "pilot");
});

Deno.test("doctorInputs() leaves utilisation unknown when the pool has not served lately", () => {
  const inputs = doctorInputs(sources({ utilisation: () => undefined }), 0);
  assert.equal(inputs.utilisation, undefined);
  assert.equal(doctorInputs(sources({ utilisation: () => 0.42 }), 0).utilisation, 0.42);
});
