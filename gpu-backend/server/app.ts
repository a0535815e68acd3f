/**
 * @module The backend's HTTP surface: KServe Open Inference Protocol v2 (JSON and
 * binary tensor extension; inference in `infer_route.ts`). Internal: bound to loopback by
 * default and, when `auth.internal_token` is set, every endpoint but liveness and readiness
 * requires it (readiness answers `{ready}` alone without it: probes need no secret).
 */
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../shared/errors.ts";
import { hasBearerToken } from "../../shared/bearer_token.ts";
import {
  EXPERT_IDS_TENSOR,
  EXPERT_WEIGHTS_TENSOR,
  INPUT_TENSOR,
  type ModelMetadata,
  OUTPUT_TENSOR,
} from "../../shared/oip.ts";
import type { MoeEngine } from "../engine/engine.ts";
import { OIP_EXTENSIONS, ROUTER_NAME, ROUTER_VERSION } from "../../shared/version.ts";
import { planRoutes } from "./plan_routes.ts";
import { residencyRoutes } from "./residency_routes.ts";
import { InputRecorder } from "../advice/input_recorder.ts";
import { adviceRoutes } from "./advice_routes.ts";
import type { BackendAppDeps } from "./backend_app_deps.ts";
import { inferRoutes } from "./infer_route.ts";
import { requireModel } from "./require_model.ts";

export type { BackendAppDeps } from "./backend_app_deps.ts";

/** Model metadata for `GET /v2/models/{model}`. */
export function modelMetadata(engine: MoeEngine): ModelMetadata {
  const m = engine.manifest;
  return {
    name: m.name,
    versions: [m.version],
    platform: "switchyard_moe_onnx",
    inputs: [{ name: INPUT_TENSOR, datatype: "FP32", shape: [-1, m.d_model] }],
    outputs: [
      { name: OUTPUT_TENSOR, datatype: "FP32", shape: [-1, m.d_model] },
      { name: EXPERT_IDS_TENSOR, datatype: "INT32", shape: [m.layers, -1, m.top_k] },
      { name: EXPERT_WEIGHTS_TENSOR, datatype: "FP32", shape: [m.layers, -1, m.top_k] },
    ],
    parameters: {
      d_model: m.d_model,
      d_ff: m.d_ff,
      layers: m.layers,
      experts: m.experts,
      top_k: m.top_k,
      groups: m.groups,
      shared_experts: m.shared_experts,
      expert_kind: m.expert_kind,
      activation: m.activation,
      router_scoring: m.router.scoring,
    },
  };
}

/** `GET /v2` server metadata (OIP v2): name, version and the protocol extensions served. */
export function serverMetadata() {
  return { name: ROUTER_NAME, version: ROUTER_VERSION, extensions: OIP_EXTENSIONS };
}

/** Creates the backend's Hono app. */
export function createBackendApp(deps: BackendAppDeps): Hono {
  const { engine, logger } = deps;
  const manifest = engine.manifest;
  const app = new Hono();

  app.onError((error) => {
    if (error instanceof ApiError) return errorResponse(error);
    logger.error("request failed", { error: (error as Error).message });
    return errorResponse(new ApiError("internal", "Cannot run inference: internal error"));
  });

  app.get("/v2/health/live", (c) => c.json({ live: true }));
  app.route("/", tokenGate(deps));

  app.get("/v2/load", (c) => c.json(deps.loadReport()));
  const metrics = deps.metrics;
  if (metrics !== undefined) {
    app.get(
      "/metrics",
      async (c) => c.body(await metrics.render(), 200, { "content-type": metrics.contentType }),
    );
  }
  // Expert residency (warm-up, budget, cold starts) belongs with placement.
  app.route("/v2/residency", residencyRoutes({ placement: deps.placement }));
  app.route("/v2/plan", planRoutes({ placement: deps.placement, peers: deps.peers }));
  const inputRecorder = deps.inputRecorder ?? new InputRecorder({ width: manifest.d_model });
  app.route("/", adviceRoutes({ engine, recorder: inputRecorder, logger }));

  app.get("/v2", (c) => c.json(serverMetadata()));

  // Metadata and readiness, unversioned and versioned (OIP v2 `…/versions/{v}`).
  for (const prefix of ["/v2/models/:model", "/v2/models/:model/versions/:version"]) {
    app.get(prefix, (c) => {
      requireModel(manifest, c);
      return c.json(modelMetadata(engine));
    });
    app.get(`${prefix}/ready`, (c) => {
      requireModel(manifest, c);
      const { ready } = deps.readiness();
      return c.json({ name: manifest.name, ready }, ready ? 200 : 503);
    });
  }

  app.route("/", inferRoutes(deps, inputRecorder));
  return app;
}

/**
 * Readiness, then — when `auth.internal_token` is set — the token check, as a Hono app
 * mounted with `app.route("/", …)`: the check covers every route mounted later. Readiness is open like liveness, so kubelet probes need no secret; its
 * details (provider, counters, placement) only go to callers holding the internal token.
 */
function tokenGate(deps: BackendAppDeps): Hono {
  const token = deps.config.auth.internal_token;
  const app = new Hono();
  app.get("/v2/health/ready", (c) => {
    const { ready, details } = deps.readiness();
    const status = ready ? 200 : 503;
    if (token !== undefined && !hasBearerToken(c.req.raw.headers, token)) {
      return c.json({ ready }, status);
    }
    return c.json({ ready, details: { backend_id: deps.backendId, ...details } }, status);
  });

  if (token !== undefined) {
    app.use("*", async (c, next) => {
      if (!hasBearerToken(c.req.raw.headers, token)) {
        throw new ApiError("unauthorized", "Cannot serve request: missing or wrong internal token");
      }
      await next();
    });
  }
  return app;
}
