import assert from "node:assert/strict";
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import { resolveConfig } from "../../../shared/config.ts";
import { balancerFixture, HOT } from "../../../tests/_support/router/balancer_fixture.ts";
import { oneSecondSample, poolLoadOf } from "../../../tests/_support/router/pool_loads.ts";
import { MemoryLogger } from "../../../shared/logging/memory_logger.ts";
import type { BackendView } from "../../serve/pool/backend_view.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { adviceRoutes } from "./advice_routes.ts";
import { Advisor } from "./advisor.ts";
import type { PoolLoad } from "../../control/load/pool_load.ts";
import { expertWeightBytes } from "../../../shared/model_manifest.ts";

const ADMIN = "admin-token-0123456789";

function view(name: string, details: Record<string, unknown>): BackendView {
  return {
    id: name,
    name,
    url: `http://${name}`,
    healthy: true,
    inFlight: 0,
    models: ["m"],
    details,
  } as unknown as BackendView;
}

const evaluation = {
  rows: 128,
  layers: [{ layer: 0, balancedness_before: 0.5, balancedness_after: 0.9, bias: [0.2, -0.2] }],
  output_deviation: { relative_l2: 0.01, max_abs: 0.02 },
  selection_changed: 0.05,
};

/** The advisor over the balancer fixture; `threshold` as the balancer fixture's (0.75). */
async function advisorFixture() {
  const f = await balancerFixture();
  await f.balancer.tick(); // the static plan first
  const calls: { url: string; method: string; body: string }[] = [];
  const fetch = (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, method: init?.method ?? "GET", body: String(init?.body ?? "") });
    return Promise.resolve(
      url.endsWith("/v2/advice/gate-bias")
        ? Response.json(evaluation)
        : Response.json({ ok: true }),
    );
  };
  const logger = new MemoryLogger();
  const clock = new ManualClock();
  const advisor = new Advisor({
    config: resolveConfig({
      env: { SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN, SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.75" },
    }),
    balancer: f.balancer,
    views: () => [view("backend-1", {}), view("backend-2", {})],
    modelShape: () => ({ dModel: 4, dFf: 8 }),
    fetch,
    clock,
    logger,
  });
  return { f, advisor, calls, logger, clock };
}

Deno.test("a hot expert yields a re-placement recommendation that applies live", async () => {
  const { f, advisor } = await advisorFixture();
  await using _ = f;
  f.load.current = HOT;
  const report = await advisor.advise();
  const replacement = report.advice.find((a) => a.id === "replacement")!;
  assert.equal(replacement.recommended, true);
  assert.ok(
    (replacement.details["balancedness_after"] as number) >
      (replacement.details["balancedness_before"] as number),
  );
  assert.equal(
    replacement.details["bytes_to_move"],
    (replacement.details["replicas_moved"] as number) * expertWeightBytes(4, 8),
  );
  const applied = await advisor.apply("replacement");
  assert.equal(applied["version"], 2);
  assert.deepEqual(
    (await f.current())!.layers.map((l) => l.phy2log),
    replacement.details["phy2log"],
  );
});

Deno.test("a flat load (worst layer 0.889 ≥ threshold 0.75) yields no re-placement, and non-live advice cannot be applied", async () => {
  const { f, advisor } = await advisorFixture();
  await using _ = f;
  const report = await advisor.advise();
  assert.equal(report.advice.find((a) => a.id === "replacement")!.recommended, false);
  await assert.rejects(advisor.apply("replacement"), /not a live recommendation/);
  assert.deepEqual(report.advice.map((a) => a.id), [
    "replacement",
    "batching",
    "gate_temperature",
    "gate_bias",
    "scaling",
  ]);
});

Deno.test("the bias is evaluated on a backend and applied to every backend", async () => {
  const { f, advisor, calls } = await advisorFixture();
  await using _ = f;
  const report = await advisor.advise();
  const bias = report.advice.find((a) => a.id === "gate_bias")!;
  assert.equal(bias.recommended, true);
  await advisor.apply("gate_bias");
  const puts = calls.filter((c) => c.method === "PUT");
  assert.deepEqual(puts.map((c) => c.url), [
    "http://backend-1/v2/gate/bias",
    "http://backend-2/v2/gate/bias",
  ]);
  assert.deepEqual(JSON.parse(puts[0]!.body), { bias: [[0.2, -0.2]] });
});

Deno.test("advice routes: read-only GET, admin-only apply with an audit line", async () => {
  const { f, advisor, logger, clock } = await advisorFixture();
  await using _ = f;
  const app = new Hono();
  // As the router app does: ApiErrors become their JSON answers.
  app.onError((error) => {
    if (error instanceof ApiError) return errorResponse(error);
    throw error;
  });
  app.route("/api/advice", adviceRoutes({ advisor, adminToken: ADMIN, logger, clock }));
  const get = await (await app.request("/api/advice")).json();
  assert.equal(get.advice.length, 5);
  assert.ok(
    get.advice.every((a: { expected_effect: string; risk: string }) =>
      a.expected_effect.length > 0 && a.risk.length > 0
    ),
  );
  const body = JSON.stringify({ id: "gate_bias" });
  assert.equal((await app.request("/api/advice/apply", { method: "POST", body })).status, 401);
  const bad = await app.request("/api/advice/apply", {
    method: "POST",
    body: JSON.stringify({ id: "temperature" }),
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /id:/);
  const ok = await app.request("/api/advice/apply", {
    method: "POST",
    body,
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  assert.equal(ok.status, 200);
  assert.equal(logger.find("admin action").length, 1);
  assert.equal(logger.find("admin action")[0]!.fields["id"], "gate_bias");
});

Deno.test("advice is cached, and a refresh recomputes at most every 5 s", async () => {
  const { f, advisor, calls, clock } = await advisorFixture();
  await using _ = f;
  const evaluations = () => calls.filter((c) => c.url.endsWith("/v2/advice/gate-bias")).length;
  await advisor.advise();
  await advisor.advise();
  await advisor.advise(true); // within 5 s of the last computation: cached
  assert.equal(evaluations(), 1);
  await clock.advance(6000);
  await advisor.advise(); // cached for 30 s
  assert.equal(evaluations(), 1);
  await advisor.advise(true);
  assert.equal(evaluations(), 2);
});

Deno.test("the first advice is precomputed from the load rounds, without running the model", async () => {
  const { f, advisor, calls } = await advisorFixture();
  await using _ = f;
  const evaluations = () => calls.filter((c) => c.url.endsWith("/v2/advice/gate-bias")).length;
  const round = (reporting: number, rate: number): PoolLoad => ({
    at: 0,
    backends: [],
    models: [{
      model: "m",
      layers: [{
        layer: 0,
        expertTokensPerS: [rate, 0],
        balancedness: 1,
        expertSkew: { top10Share: 1, cv: 1 },
      }],
    }],
    pool: { reporting, balancedness: 1, utilisationBalancedness: 1, utilisationCv: 0 },
  });
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  // Nothing reporting yet: nothing to precompute.
  advisor.prepare(round(0, 0));
  await settle();
  // Backends report, with expert load: the advice is precomputed, no backend evaluation.
  advisor.prepare(round(2, 50));
  await settle();
  advisor.prepare(round(2, 60)); // once is enough
  await settle();
  assert.equal(evaluations(), 0, "precomputing never runs the model on a backend");
  // The first call answers the precomputed report at once and starts the full one.
  const first = await advisor.advise();
  assert.equal(first.partial, true);
  assert.equal(first.advice[0]!.id, "replacement");
  const bias = first.advice.find((a) => a.id === "gate_bias")!;
  assert.match(bias.evidence.join(" "), /not evaluated yet/);
  await settle();
  assert.equal(evaluations(), 1);
  const full = await advisor.advise();
  assert.equal(full.partial, undefined);
  assert.notEqual(full, first);
  // A later round precomputes nothing over a full report.
  advisor.prepare(round(2, 70));
  await settle();
  assert.equal(await advisor.advise(), full);
  assert.equal(evaluations(), 1);
});

Deno.test("advice made on an idle pool is never answered for traffic measured since", async () => {
  const f = await balancerFixture();
  await using _ = f;
  await f.balancer.tick();
  const clock = new ManualClock();
  let load = poolLoadOf(oneSecondSample("h:1", [[0, 0, 0, 0], [0, 0, 0, 0]]));
  const advisor = new Advisor({
    config: resolveConfig({ env: { SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN } }),
    balancer: f.balancer,
    views: () => [view("backend-1", {})],
    modelShape: () => ({ dModel: 4, dFf: 8 }),
    load: () => load,
    fetch: () => Promise.resolve(Response.json(evaluation)),
    clock,
    logger: new MemoryLogger(),
  });
  const idle = await advisor.advise();
  assert.equal(idle.traffic, false);
  await clock.advance(2000);
  // Traffic now: the idle report (2 s old, well inside the cache time) is not reused.
  load = poolLoadOf(oneSecondSample("h:1", [[50, 0, 0, 0], [0, 0, 30, 0]]));
  const fresh = await advisor.advise();
  assert.equal(fresh.traffic, true);
  assert.equal(fresh.at, idle.at + 2000);
  assert.equal(await advisor.advise(), fresh, "then cached as usual");
});
