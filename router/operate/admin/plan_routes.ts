/**
 * @module Placement-plan endpoints of the router's admin API.
 *
 * - `GET /api/plan` (read-only, no auth): the current plan, its predicted balancedness
 *   (`predicted_balancedness`, pool and per layer, with `predicted_worst_layer`: what
 *   the plan would reach under the balancer's short-window load — what its trigger
 *   compares with `threshold`), `moves` (per backend the experts hosted over all layers
 *   and the replicas loaded since the previous stored plan, `plan_moves.ts`), the pin and
 *   the last balancer decisions. The measured balancedness now is `/api/load`'s.
 *   `placement`: the balancer's last choice between full replication and expert
 *   parallelism with its inputs (slots, budgets, remote-row and expert-row costs with
 *   their provenance), predictions and the cost of moving weights; `health`: EPLB health
 *   (switches by outcome, their durations, weights moved, a due rebalance held and why);
 *   both from `placement_body.ts`.
 * - `POST /api/plan/preview`, `POST /api/plan/apply` (`{phy2log?, pin?}`: `pin: true`
 *   applies and pins in one step), `POST /api/plan/pin`,
 *   `DELETE /api/plan/pin`: admin only (`authorization: Bearer <auth.admin_token>`).
 *
 * Every state change is logged as an audit line (`who`, `what`, `version`), never with
 * the token.
 */
import { type Context, type Env, Hono } from "hono";
import { z } from "zod";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import { readJsonBody } from "../../../shared/json_body.ts";
import { requireAdmin } from "../../serve/http/require_admin.ts";
import type { Logger } from "../../../shared/logger.ts";
import { hostedExperts, type PlacementPlan } from "../../../shared/placement_plan.ts";
import type { Balancer } from "../../control/balancer/balancer.ts";
import {
  BalancerError,
  type DecisionRecord,
  type PlanPreview,
  type SwitchResult,
} from "../../control/balancer/balancer_types.ts";
import { PlanCallError } from "../../control/balancer/plan_client.ts";
import { isOwnerRefusal } from "../../../shared/plan_owner.ts";
import { predictedBalance } from "../../control/balancer/plan_math.ts";
import { type PlanMoves, planMoves } from "./plan_moves.ts";
import { healthBody, placementBody } from "./placement_body.ts";
import type { PlanStore } from "../../control/balancer/plan_store.ts";

/** What the plan routes need. */
export interface PlanRoutesDeps {
  balancer: Balancer;
  store: PlanStore;
  /** `auth.admin_token`; without it every state-changing route answers 403. */
  adminToken: string | undefined;
  logger: Logger;
  /** Body limit, `limits.max_body_bytes`; default 16 MiB. */
  maxBodyBytes?: number;
}

const Matrix = z.array(z.array(z.number().min(0)));
const PreviewBodySchema = z.strictObject({ weight: Matrix.min(1).optional() });
const ApplyBodySchema = z.strictObject({
  phy2log: z.array(z.array(z.int().min(0))).optional(),
  /** Pin the applied version in the same step (the balancer never replaces it meanwhile). */
  pin: z.boolean().optional(),
});
/** Plan actions whose fields are all optional accept an empty body. */
const EMPTY_OK = { allowEmpty: true };
const PinBodySchema = z.strictObject({ version: z.int().positive() });

/** The plan routes as a Hono app to mount at `/api/plan`; see the module doc. */
export function planRoutes(deps: PlanRoutesDeps): Hono {
  const { balancer, store, logger } = deps;
  const app = new Hono();
  const maxBytes = deps.maxBodyBytes ?? 16 * 1024 * 1024;
  const audit = (what: string, fields: Record<string, unknown>) =>
    logger.info("admin action", { who: "admin", what, ...fields });

  // Moves per plan version: computed once (the dashboard reads /api/plan every second).
  const moves = new Map<string, PlanMoves>();
  app.get("/", (c) => handle(c, () => planSummary(balancer, store, moves)));

  app.post("/preview", (c) =>
    handle(c, async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const body = await readJsonBody(
        c.req.raw,
        maxBytes,
        PreviewBodySchema,
        "preview plan",
        EMPTY_OK,
      );
      return previewBody(await balancer.preview(body.weight));
    }));

  app.post("/apply", (c) =>
    handle(c, async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const body = await readJsonBody(c.req.raw, maxBytes, ApplyBodySchema, "apply plan", EMPTY_OK);
      const result = await balancer.apply({
        ...(body.phy2log ? { phy2log: body.phy2log } : {}),
        ...(body.pin ? { pin: true } : {}),
      });
      audit("apply plan", {
        model: balancer.modelShape()?.name ?? null,
        version: result.version,
        previous: result.previous,
        source: body.phy2log ? "phy2log" : "observed load",
        pinned: body.pin ?? false,
      });
      return applyBody(result, body.pin ?? false);
    }));

  app.post("/pin", (c) =>
    handle(c, async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const body = await readJsonBody(c.req.raw, maxBytes, PinBodySchema, "pin plan", EMPTY_OK);
      const result = await balancer.pin(body.version);
      audit("pin plan", {
        model: balancer.modelShape()?.name ?? null,
        version: result.pinned,
        restored_from: result.restoredFrom,
      });
      return { pinned: result.pinned, restored_from: result.restoredFrom };
    }));

  app.delete("/pin", (c) =>
    handle(c, async () => {
      requireAdmin(c.req.raw.headers, deps.adminToken);
      const was = await balancer.unpin();
      audit("unpin plan", { model: balancer.modelShape()?.name ?? null, version: was });
      return { pinned: null, was };
    }));
  return app;
}

/** The `POST /api/plan/preview` body. */
function previewBody(preview: PlanPreview) {
  return {
    model: preview.model,
    current: preview.current,
    proposed: {
      phy2log: preview.proposed.phy2log,
      slots_per_backend: preview.proposed.slotsPerBackend,
      balancedness: preview.proposed.balancedness,
    },
    moved: preview.moved,
  };
}

/** The `POST /api/plan/apply` body; `pinned` when the apply pinned its version. */
function applyBody(result: SwitchResult, pinned: boolean) {
  return {
    version: result.version,
    previous: result.previous,
    reason: result.reason,
    moved: result.moved,
    balancedness: result.predicted,
    pending_activation: result.pendingActivation,
    pinned: pinned ? result.version : null,
  };
}

/** Runs a handler; maps balancer and backend errors to the JSON error body. */
async function handle<E extends Env>(c: Context<E>, work: () => Promise<unknown>) {
  try {
    return c.json(await work());
  } catch (error) {
    const api = asApiError(error);
    if (api === undefined) throw error;
    return errorResponse(api);
  }
}

function asApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof BalancerError) {
    const code = ({
      invalid: "bad_request",
      conflict: "conflict",
      not_found: "not_found",
      unavailable: "no_healthy_backend",
    } as const)[error.kind];
    return new ApiError(code, error.message);
  }
  if (error instanceof PlanCallError) {
    // Backends that follow another pool (or a newer term) refused: a conflict, not a fault.
    const refused = error.failures.length > 0 &&
      error.failures.every((failure) => isOwnerRefusal(failure.reason));
    return new ApiError(
      refused ? "conflict" : "backend_error",
      `${error.message}; the current plan is unchanged`,
    );
  }
  return undefined;
}

function round(value: number | null): number | null {
  return value === null ? null : Math.round(value * 1000) / 1000;
}

function decisionBody(decision: DecisionRecord) {
  return {
    at: decision.at,
    trigger: decision.trigger,
    action: decision.action,
    reason: decision.reason,
    outcome: decision.outcome,
    version: decision.version,
    before: round(decision.before),
    after: round(decision.after),
    moved: decision.moved,
    bytes: decision.bytes ?? null,
    placement: decision.placement === undefined ? null : {
      choice: decision.placement.choice,
      remote_row_ms: decision.placement.remoteRowMs,
      remote_row_source: decision.placement.remoteRowSource,
      gain: decision.placement.gain === null
        ? null
        : Math.round(decision.placement.gain * 10_000) / 10_000,
    },
    error: decision.error ?? null,
  };
}

/** The `GET /api/plan` body. */
async function planSummary(balancer: Balancer, store: PlanStore, cache: Map<string, PlanMoves>) {
  const model = balancer.modelShape();
  const settings = balancer.settings;
  const [plan, pinned] = model === null
    ? [null, null]
    : await Promise.all([store.current(model.name), store.pinned(model.name)]);
  const loads = balancer.observedLoads();
  let predicted: { perLayer: number[]; pool: number } | null = null;
  if (plan !== null && loads !== null) {
    try {
      predicted = predictedBalance(plan, loads);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
  }
  return {
    model: model?.name ?? null,
    strategy: settings.enabled ? settings.strategy : "off",
    threshold: settings.threshold,
    version: plan?.version ?? null,
    reason: plan?.reason ?? null,
    created_at: plan?.createdAt ?? null,
    backends: plan?.backends ?? [],
    slots_per_backend: plan?.slotsPerBackend ?? null,
    predicted_balancedness: round(predicted?.pool ?? null),
    predicted_worst_layer: predictedWorst(plan, loads, predicted),
    moves: plan === null ? null : await movesOf(plan, store, cache),
    layers: plan === null ? [] : layerSummaries(plan, predicted),
    pinned,
    placement: placementOf(balancer),
    health: healthBody(balancer.health()),
    decisions: balancer.decisions().map(decisionBody),
  };
}

function placementOf(balancer: Balancer) {
  const analysis = balancer.placement();
  return analysis === null ? null : placementBody(analysis);
}

/** {@linkcode planMoves} of `plan` against the previous stored plan, cached per version. */
async function movesOf(plan: PlacementPlan, store: PlanStore, cache: Map<string, PlanMoves>) {
  const key = `${plan.model}@${plan.version}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const previous = (await store.history(plan.model, 8)).find((p) => p.version < plan.version);
  const moves = planMoves(plan, previous ?? null);
  if (cache.size >= 8) cache.delete(cache.keys().next().value!);
  cache.set(key, moves);
  return moves;
}

/** The loaded layer the trigger judges (`worstLayer` of the rebalancer), or null. */
function predictedWorst(
  plan: PlacementPlan | null,
  loads: number[][] | null,
  predicted: { perLayer: number[] } | null,
) {
  if (plan === null || loads === null || predicted === null) return null;
  let worst: { layer: number; balancedness: number } | null = null;
  predicted.perLayer.forEach((value, layer) => {
    if (!loads[layer]?.some((v) => v > 0)) return;
    if (worst === null || value < worst.balancedness) worst = { layer, balancedness: value };
  });
  const found = worst as { layer: number; balancedness: number } | null;
  return found === null ? null : { layer: found.layer, balancedness: round(found.balancedness) };
}

function layerSummaries(plan: PlacementPlan, predicted: { perLayer: number[] } | null) {
  const hosted = plan.backends.map((backend) => hostedExperts(plan, backend.id));
  return plan.layers.map((_, layer) => ({
    layer,
    predicted_balancedness: round(predicted?.perLayer[layer] ?? null),
    hosted: plan.backends.map((backend, b) => ({
      backend: backend.id,
      experts: hosted[b]![layer] ?? [],
    })),
  }));
}
