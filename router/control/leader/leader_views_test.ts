import assert from "node:assert/strict";
import { Hono } from "hono";
import { createJsonLogger } from "../../../shared/logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import { LeaderViews } from "./leader_views.ts";

const quiet = createJsonLogger({ level: "error", write: () => {} });

/** Two routers on one KV: their own answers differ; the follower must answer the leader's. */
function router(kv: Deno.Kv, clock: ManualClock, name: string, leading: () => boolean) {
  const views = new LeaderViews(kv, {
    clock,
    logger: quiet,
    isLeader: leading,
    leader: () => ({ id: name, term: 7 }),
  });
  const app = new Hono();
  app.use("*", views.middleware());
  app.get("/api/plan", (c) => c.json({ from: name }));
  app.get("/api/alerts", (c) => c.json({ from: name }));
  app.get(
    "/api/prewarm",
    (c) => c.json({ from: name, decisions: [1, 2, 3], limit: c.req.query("limit") ?? null }),
  );
  return { views, app };
}

Deno.test("LeaderViews: followers answer the leader's published bodies; the leader answers live", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(0);
  const leader = router(kv, clock, "router-a", () => true);
  const follower = router(kv, clock, "router-b", () => false);
  // Before anything is published a follower answers itself.
  assert.deepEqual(await (await follower.app.request("/api/plan")).json(), { from: "router-b" });
  await clock.advance(1000); // past the follower's 500 ms cache of "nothing published"
  await leader.views.publish((path) => Promise.resolve(leader.app.request(path)));
  const plan = await follower.app.request("/api/plan");
  assert.deepEqual(await plan.json(), { from: "router-a" });
  assert.equal(plan.headers.get("x-switchyard-leader"), "router-a");
  assert.deepEqual(await (await follower.app.request("/api/alerts")).json(), { from: "router-a" });
  const limited = await (await follower.app.request("/api/prewarm?limit=2")).json();
  assert.deepEqual(limited.decisions, [1, 2]);
  assert.deepEqual(await (await leader.app.request("/api/plan")).json(), { from: "router-a" });
  // Other paths and methods are the follower's own.
  assert.equal((await follower.app.request("/api/plan", { method: "POST" })).status, 404);
  kv.close();
});

Deno.test("LeaderViews: a follower answers itself when the published body is known to be stale", async () => {
  const kv = await Deno.openKv(":memory:");
  const clock = new ManualClock(0);
  let stale = false;
  const leader = router(kv, clock, "router-a", () => true);
  const views = new LeaderViews(kv, {
    clock,
    logger: quiet,
    isLeader: () => false,
    leader: () => ({ id: "router-b", term: 7 }),
    stale: (path, body) =>
      Promise.resolve(stale && path === "/api/plan" && body.includes("router-a")),
  });
  const follower = new Hono();
  follower.use("*", views.middleware());
  follower.get("/api/plan", (c) => c.json({ from: "router-b" }));
  await leader.views.publish((path) => Promise.resolve(leader.app.request(path)));
  assert.deepEqual(await (await follower.request("/api/plan")).json(), { from: "router-a" });
  stale = true;
  assert.deepEqual(await (await follower.request("/api/plan")).json(), { from: "router-b" });
  kv.close();
});
