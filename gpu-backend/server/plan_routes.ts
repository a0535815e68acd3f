/**
 * @module The backend's placement endpoints (internal; the router drives them):
 * `PUT /v2/plan` stages a plan (loads and warms this backend's experts),
 * `POST /v2/plan/activate` switches to it, `PUT /v2/plan/weights` updates the active
 * plan's replica weights, `POST /v2/plan/release` unloads what the active plan no longer
 * places here, `GET /v2/plan` says which versions are where, `GET /v2/plan/active` returns
 * the active plan itself (404 when none: a router with an empty KV adopts it).
 *
 * Fencing: every plan-changing call must come from the pool and leader term this backend
 * follows (`placement.owner`, `shared/plan_owner.ts`): another pool or an older term is
 * answered 409 before anything changes. `GET /v2/plan` names the owner followed.
 */
import { Hono } from "hono";
import { ApiError } from "../../shared/errors.ts";
import { readJsonBody } from "../../shared/json_body.ts";
import {
  PlacementPlanSchema,
  PlanVersionBodySchema,
  ReplicaWeightsBodySchema,
} from "../../shared/placement_plan.ts";
import type { PeerRegistry } from "../peer/peer_registry.ts";
import type { PlacementState } from "../placement/placement_state.ts";

/** Plans (slots per layer) and weights are small; this bounds a bad caller. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The plan endpoints as a Hono app to mount at `/v2/plan` (behind the internal-token check). */
export function planRoutes(deps: { placement: PlacementState; peers: PeerRegistry }): Hono {
  const { placement, peers } = deps;
  const app = new Hono();
  app.get("/", (c) =>
    c.json({
      active: placement.active?.version ?? null,
      staged: placement.staged?.version ?? null,
      owner: placement.owner.owner,
      cold_starts: placement.coldStarts,
      peers: peers.stats(),
    }));
  app.get("/active", (c) => {
    const active = placement.active;
    if (active === null) {
      throw new ApiError("not_found", "Cannot find the active plan: this backend has none");
    }
    return c.json(active);
  });
  app.put("/", async (c) => {
    const plan = await readJsonBody(c.req.raw, MAX_BODY_BYTES, PlacementPlanSchema, "stage plan");
    placement.owner.admit(`stage plan ${plan.version}`, c.req.raw.headers, plan.owner);
    peers.update(plan.backends);
    const { loaded, ms, layersMs } = await placement.stage(plan);
    return c.json({
      staged: plan.version,
      loaded,
      ms: Math.round(ms),
      // Layer path: composing and loading the plan's layer executables.
      ...(layersMs !== undefined ? { layers_ms: Math.round(layersMs) } : {}),
    });
  });
  app.post("/activate", async (c) => {
    const { version } = await readJsonBody(
      c.req.raw,
      MAX_BODY_BYTES,
      PlanVersionBodySchema,
      "activate plan",
    );
    placement.owner.admit(`activate plan ${version}`, c.req.raw.headers);
    placement.activate(version);
    return c.json({ active: version });
  });
  app.put("/weights", async (c) => {
    const body = await readJsonBody(
      c.req.raw,
      MAX_BODY_BYTES,
      ReplicaWeightsBodySchema,
      "set replica weights",
    );
    placement.owner.admit(`set replica weights of plan ${body.version}`, c.req.raw.headers);
    placement.setWeights(body.version, body.weights);
    return c.json({ version: body.version });
  });
  app.post("/release", async (c) => {
    const { version } = await readJsonBody(
      c.req.raw,
      MAX_BODY_BYTES,
      PlanVersionBodySchema,
      "release plan",
    );
    placement.owner.admit(`release plan ${version}`, c.req.raw.headers);
    return c.json({ unloaded: await placement.release(version) });
  });
  return app;
}
