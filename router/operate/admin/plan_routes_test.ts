/** @module Plan admin routes through `app.request()`: auth, preview, apply, pin. */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { balancerFixture, HOT, MODEL } from "../../../tests/_support/router/balancer_fixture.ts";
import { planRoutes } from "./plan_routes.ts";

const ADMIN = "admin-token-0123456789";
const A = "127.0.0.1:9001";

async function setup(options: { adminToken?: string | undefined; maxBodyBytes?: number } = {}) {
  const adminToken = "adminToken" in options ? options.adminToken : ADMIN;
  const f = await balancerFixture();
  const app = new Hono().route(
    "/api/plan",
    planRoutes({
      balancer: f.balancer,
      store: f.store,
      adminToken,
      logger: f.logger,
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
    }),
  );
  const call = (method: string, path: string, body?: unknown, token: string | null = ADMIN) => {
    const headers = new Headers();
    if (token !== null) headers.set("authorization", `Bearer ${token}`);
    if (body !== undefined) headers.set("content-type", "application/json");
    return app.request(path, {
      method,
      headers,
      ...(body === undefined
        ? {}
        : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
  };
  return Object.assign(f, { app, call });
}

Deno.test("GET /api/plan summarises the current plan without auth", async () => {
  await using f = await setup();
  const empty = await (await f.call("GET", "/api/plan", undefined, null)).json();
  assert.equal(empty.model, "m");
  assert.equal(empty.version, null);
  assert.deepEqual(empty.layers, []);
  await f.balancer.tick();
  const response = await f.call("GET", "/api/plan", undefined, null);
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.version, 1);
  assert.equal(body.strategy, "dynamic");
  assert.equal(body.threshold, 0.75);
  assert.equal(body.slots_per_backend, 5);
  assert.equal(body.pinned, null);
  // Predicted: what the plan reaches under the balancer's load (the trigger's measure).
  assert.equal(body.predicted_balancedness, 0.889);
  assert.deepEqual(body.predicted_worst_layer, { layer: 0, balancedness: 0.889 });
  assert.deepEqual(body.layers[0].hosted[0], { backend: A, experts: [0, 1, 2, 3] });
  assert.equal(body.layers[0].predicted_balancedness, 0.889);
  // The first plan: every hosted expert was loaded for it.
  assert.equal(body.moves.from_version, null);
  assert.equal(
    body.moves.moved,
    body.moves.backends.reduce(
      (sum: number, b: { hosted: number }) => sum + b.hosted,
      0,
    ),
  );
  assert.equal(body.decisions.length, 1);
  assert.equal(body.decisions[0].outcome, "switched");
  assert.equal(body.decisions[0].version, 1);
});

Deno.test("state-changing plan routes answer 403 without a configured admin token", async () => {
  await using f = await setup({ adminToken: undefined });
  for (
    const [method, path] of [
      ["POST", "/api/plan/preview"],
      ["POST", "/api/plan/apply"],
      ["POST", "/api/plan/pin"],
      ["DELETE", "/api/plan/pin"],
    ] as const
  ) {
    const response = await f.call(method, path, {});
    assert.equal(response.status, 403, `${method} ${path}`);
    assert.deepEqual(await response.json(), {
      error: "Cannot change state: auth.admin_token is not configured",
      code: "forbidden",
    });
  }
});

Deno.test("state-changing plan routes answer 401 with a missing or wrong token", async () => {
  await using f = await setup();
  for (const token of [null, "wrong", `${ADMIN}x`]) {
    const response = await f.call("POST", "/api/plan/apply", {}, token);
    assert.equal(response.status, 401);
    assert.deepEqual(await response.json(), {
      error: "Cannot change state: missing or wrong admin token",
      code: "unauthorized",
    });
  }
  assert.equal(await f.current(), null);
});

Deno.test("POST /api/plan/preview returns balancedness before and after", async () => {
  await using f = await setup();
  await f.balancer.tick();
  const response = await f.call("POST", "/api/plan/preview", { weight: HOT });
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.current.version, 1);
  assert.ok(Math.abs(body.current.balancedness - 0.68) < 1e-9);
  assert.ok(body.proposed.balancedness > body.current.balancedness);
  assert.equal(body.proposed.slots_per_backend, 5);
  assert.equal(body.proposed.phy2log.length, MODEL.layers);
  assert.ok(body.moved > 0);
  // Without a body it plans on the observed load (uniform here).
  const observed = await (await f.call("POST", "/api/plan/preview")).json();
  assert.ok(Math.abs(observed.current.balancedness - 80 / 90) < 1e-9);
  const bad = await f.call("POST", "/api/plan/preview", { weight: [[1, -1]] });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /^Cannot preview plan: weight\[0\]\[1\]: /);
  const shape = await f.call("POST", "/api/plan/preview", { weight: [[1, 1]] });
  assert.equal(shape.status, 400);
  assert.match((await shape.json()).error, /weight has 1 layers, model "m" has 2/);
  assert.equal((await f.current())?.version, 1);
});

Deno.test("POST /api/plan/apply rejects a bad phy2log with 400 naming the field", async () => {
  await using f = await setup();
  await f.balancer.tick();
  const cases: [unknown, RegExp][] = [
    [{ phy2log: [[0, 1, 2], [0, 1, 2]] }, /phy2log\[0\] has 3 slots/],
    [{ phy2log: [[0, 1.5]] }, /phy2log\[0\]\[1\]: /],
    [
      { phy2log: [[0, 1, 2, 3, 4, 5, 6, 9], [0, 1, 2, 3, 4, 5, 6, 7]] },
      /phy2log\[0\]\[7\] is expert 9/,
    ],
    [{ phy2log: [[0, 1, 2, 3, 4, 5, 6, 7]] }, /phy2log has 1 layers, model "m" has 2/],
    [{ plan: 1 }, /Cannot apply plan: body: .*plan/],
    ["{not json", /body is not valid JSON/],
  ];
  for (const [body, message] of cases) {
    const response = await f.call("POST", "/api/plan/apply", body);
    assert.equal(response.status, 400, JSON.stringify(body));
    const error = await response.json();
    assert.equal(error.code, "bad_request");
    assert.match(error.error, message);
  }
  assert.equal((await f.current())?.version, 1);
});

Deno.test("plan routes answer 413 past the body limit", async () => {
  await using f = await setup({ maxBodyBytes: 64 });
  const response = await f.call("POST", "/api/plan/apply", { phy2log: [Array(40).fill(0)] });
  assert.equal(response.status, 413);
  assert.equal((await response.json()).code, "payload_too_large");
});

Deno.test("POST /api/plan/apply switches to a good plan and audits it", async () => {
  await using f = await setup();
  await f.balancer.tick();
  const phy2log = [[7, 6, 5, 4, 3, 2, 1, 0], [0, 1, 2, 3, 4, 5, 6, 7]];
  const response = await f.call("POST", "/api/plan/apply", { phy2log });
  assert.equal(response.status, 200);
  const body = await response.json();
  assert.equal(body.version, 2);
  assert.equal(body.previous, 1);
  assert.deepEqual(body.pending_activation, []);
  assert.equal((await f.current())?.version, 2);
  const plan = await (await f.call("GET", "/api/plan", undefined, null)).json();
  assert.equal(plan.version, 2);
  assert.deepEqual(plan.layers[0].hosted[0].experts, [4, 5, 6, 7]);
  // Moves since the last plan: layer 0 swapped halves — 4 new experts on A; 3 on the
  // second backend, whose spare slot of version 1 already held a replica of expert 1.
  assert.deepEqual(plan.moves, {
    from_version: 1,
    moved: 7,
    backends: [
      { backend: A, hosted: 8, moved: 4 },
      { backend: "127.0.0.1:9002", hosted: 8, moved: 3 },
    ],
  });
  const audit = f.logger.find("admin action");
  assert.deepEqual(audit.map((r) => [r.fields["who"], r.fields["what"], r.fields["version"]]), [
    ["admin", "apply plan", 2],
  ]);
  assert.ok(!JSON.stringify(f.logger.records).includes(ADMIN));
  // `{}` plans on the observed load.
  f.load.current = HOT;
  const planned = await (await f.call("POST", "/api/plan/apply", {})).json();
  assert.equal(planned.version, 3);
  assert.ok(planned.balancedness.after > 0.95);
});

Deno.test("POST /api/plan/apply answers 502 and changes nothing when staging fails", async () => {
  await using f = await setup();
  await f.balancer.tick();
  f.load.current = HOT;
  f.backends.failStage.add(A);
  const response = await f.call("POST", "/api/plan/apply", {});
  assert.equal(response.status, 502);
  const body = await response.json();
  assert.equal(body.code, "backend_error");
  assert.match(body.error, /failed on "127\.0\.0\.1:9001".*the current plan is unchanged$/);
  assert.equal((await f.current())?.version, 1);
});

Deno.test("POST /api/plan/pin blocks ticks and apply; DELETE unpins", async () => {
  await using f = await setup();
  await f.balancer.tick();
  const pinned = await f.call("POST", "/api/plan/pin", { version: 1 });
  assert.equal(pinned.status, 200);
  assert.deepEqual(await pinned.json(), { pinned: 1, restored_from: null });
  f.load.current = HOT;
  const record = await f.balancer.tick();
  assert.equal(record.reason, "pinned to version 1");
  assert.equal((await f.current())?.version, 1);
  const apply = await f.call("POST", "/api/plan/apply", {});
  assert.equal(apply.status, 409);
  assert.match((await apply.json()).error, /pinned to version 1; unpin it first/);
  assert.equal((await (await f.call("GET", "/api/plan", undefined, null)).json()).pinned, 1);
  const missing = await f.call("POST", "/api/plan/pin", { version: 9 });
  assert.equal(missing.status, 404);
  const bad = await f.call("POST", "/api/plan/pin", { version: 0 });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /^Cannot pin plan: version: /);
  const unpinned = await f.call("DELETE", "/api/plan/pin");
  assert.deepEqual(await unpinned.json(), { pinned: null, was: 1 });
  assert.equal((await f.balancer.tick()).outcome, "switched");
  assert.deepEqual(
    f.logger.find("admin action").map((r) => [r.fields["what"], r.fields["version"]]),
    [["pin plan", 1], ["unpin plan", 1]],
  );
});

Deno.test("GET /api/plan shows the placement decision with its inputs, and the EPLB health", async () => {
  const MIB = 1048576;
  const budgets = new Map([[A, { budgetBytes: 64 * MIB, expertBytes: MIB }], [
    "127.0.0.1:9002",
    { budgetBytes: 64 * MIB, expertBytes: MIB },
  ]]);
  await using f = await balancerFixture({ placement: "auto" }, { budgets });
  const app = new Hono().route(
    "/api/plan",
    planRoutes({
      balancer: f.balancer,
      store: f.store,
      adminToken: ADMIN,
      logger: f.logger,
    }),
  );
  const before = await (await app.request("/api/plan")).json();
  assert.equal(before.placement, null);
  assert.equal(before.health.last_rebalance_at, null);
  await f.balancer.tick();
  const body = await (await app.request("/api/plan")).json();
  assert.equal(body.slots_per_backend, MODEL.experts);
  const placement = body.placement;
  assert.equal(placement.mode, "auto");
  assert.equal(placement.choice, "full_replication");
  assert.equal(placement.full_replication_fits, true);
  assert.deepEqual(placement.inputs.slots_per_backend, { expert_parallel: 5, full_replication: 8 });
  assert.deepEqual(placement.inputs.budgets[0], {
    backend: A,
    budget_bytes: 64 * MIB,
    expert_bytes: MIB,
    experts_per_layer: 32,
  });
  assert.equal(placement.inputs.remote_row_ms.source, "assumed");
  assert.equal(placement.inputs.remote_row_ms.value, 0.1);
  assert.equal(placement.inputs.load, "observed");
  assert.equal(placement.predicted.full_replication.remote_row_share, 0);
  // The static blocks with a spare each: expert 1 on both backends, the other 7 on one.
  assert.equal(placement.predicted.expert_parallel.remote_row_share, 7 / 16);
  assert.ok(placement.predicted.gain > 0);
  const [decision] = body.decisions;
  assert.equal(decision.bytes, 32 * MIB);
  assert.deepEqual(
    { choice: decision.placement.choice, source: decision.placement.remote_row_source },
    { choice: "full_replication", source: "assumed" },
  );
  assert.deepEqual(body.health.rebalances, [{
    outcome: "switched",
    trigger: "balancer",
    count: 1,
  }]);
  assert.equal(body.health.moved_bytes, 32 * MIB);
  assert.equal(body.health.seconds_since_last_rebalance, 0);
  assert.equal(body.health.switch_duration_s.count, 1);
  assert.equal(body.health.stall_after_s, 180);
  assert.equal(body.health.due, null);
});
