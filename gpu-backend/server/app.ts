/**
 * @module The backend's HTTP surface: KServe Open Inference Protocol v2 (JSON and
 * binary tensor extension). Internal: bound to loopback by default and, when
 * `auth.internal_token` is set, every endpoint but liveness and readiness requires it
 * (readiness answers `{ready}` alone without it: probes need no secret).
 */
import { Hono } from "hono";
import type { Config } from "../../shared/config.ts";
import { ApiError, errorResponse } from "../../shared/errors.ts";
import { hasBearerToken } from "../../shared/bearer_token.ts";
import { parseHeaderLength } from "../../shared/header_length.ts";
import { readLimitedBody } from "../../shared/read_body.ts";
import type { InputFaults } from "../../shared/input_faults.ts";
import { decodeInferRequest } from "../../shared/infer_request_codec.ts";
import { formatServerTiming } from "../../shared/server_timing.ts";
import { type BackendPhase, RequestTiming } from "../timing/request_timing.ts";
import type { PhaseHistogram } from "../metrics/phase_histogram.ts";
import { encodeInferResponse, type OutputTensor } from "../../shared/infer_response_codec.ts";
import {
  BATCHES_HEADER,
  encodeBatchSizes,
  encodeExpertCounts,
  expertCountsFromIds,
  EXPERTS_HEADER,
} from "../../shared/expert_trace.ts";
import type { LoadReport } from "../../shared/load_report.ts";
import type { Logger } from "../../shared/logger.ts";
import {
  EXPERT_IDS_TENSOR,
  EXPERT_WEIGHTS_TENSOR,
  INPUT_TENSOR,
  type ModelMetadata,
  OUTPUT_TENSOR,
  REQUEST_TYPE_HEADER,
} from "../../shared/oip.ts";
import type { MoeEngine } from "../engine/engine.ts";
import { OIP_EXTENSIONS, ROUTER_NAME, ROUTER_VERSION } from "../../shared/version.ts";
import type { PeerRegistry } from "../peer/peer_registry.ts";
import type { BackendMetrics } from "../metrics/backend_metrics.ts";
import type { PlacementState } from "../placement/placement_state.ts";
import { registerPlanRoutes } from "./plan_routes.ts";
import { InputRecorder } from "../advice/input_recorder.ts";
import { registerAdviceRoutes } from "./advice_routes.ts";

/** Dependencies of {@linkcode createBackendApp}. */
export interface BackendAppDeps {
  config: Config;
  backendId: string;
  engine: MoeEngine;
  /** Readiness and its details (provider, executors, queue). */
  readiness: () => { ready: boolean; details: Record<string, unknown> };
  /** This backend's load report now (`GET /v2/load`). */
  loadReport: () => LoadReport;
  logger: Logger;
  placement: PlacementState;
  peers: PeerRegistry;
  /** Active execution provider; `simulated` marks every inference response. */
  executionProvider?: string;
  /** Serves `GET /metrics` (Prometheus text, behind the internal token) when present. */
  metrics?: Pick<BackendMetrics, "contentType" | "render">;
  /** Samples served input rows for the gate-bias evaluation; default a 256-row recorder. */
  inputRecorder?: InputRecorder;
  /** Counts clients that disconnect mid-body and bodies past `limits.body_timeout`. */
  inputFaults?: InputFaults;
  /** Hears every answered request's phases (`switchyard_backend_request_phase_seconds`). */
  phases?: PhaseHistogram<BackendPhase>;
}

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
  const { config, engine, logger } = deps;
  const manifest = engine.manifest;
  const app = new Hono();

  app.onError((error) => {
    if (error instanceof ApiError) return errorResponse(error);
    logger.error("request failed", { error: (error as Error).message });
    return errorResponse(new ApiError("internal", "Cannot run inference: internal error"));
  });

  app.get("/v2/health/live", (c) => c.json({ live: true }));

  const token = config.auth.internal_token;
  // Readiness is open like liveness, so kubelet probes need no secret; its details
  // (provider, counters, placement) only go to callers holding the internal token.
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

  app.get("/v2/load", (c) => c.json(deps.loadReport()));
  const metrics = deps.metrics;
  if (metrics !== undefined) {
    app.get(
      "/metrics",
      async (c) => c.body(await metrics.render(), 200, { "content-type": metrics.contentType }),
    );
  }
  registerPlanRoutes(app, { placement: deps.placement, peers: deps.peers });
  const inputRecorder = deps.inputRecorder ?? new InputRecorder({ width: manifest.d_model });
  registerAdviceRoutes(app, { engine, recorder: inputRecorder, logger });

  /** 404 unless the path names this backend's model (and, when given, its version). */
  const requireModel = (c: { req: { param(name: string): string | undefined } }) => {
    const name = c.req.param("model");
    if (name !== manifest.name) {
      throw new ApiError(
        "not_found",
        `Cannot find model "${name}": this backend serves "${manifest.name}"`,
      );
    }
    const version = c.req.param("version");
    if (version !== undefined && version !== manifest.version) {
      throw new ApiError(
        "not_found",
        `Cannot find model "${name}" version "${version}": this backend serves version "${manifest.version}"`,
      );
    }
  };

  app.get("/v2", (c) => c.json(serverMetadata()));

  // Metadata and readiness, unversioned and versioned (OIP v2 `…/versions/{v}`).
  for (const prefix of ["/v2/models/:model", "/v2/models/:model/versions/:version"]) {
    app.get(prefix, (c) => {
      requireModel(c);
      return c.json(modelMetadata(engine));
    });
    app.get(`${prefix}/ready`, (c) => {
      requireModel(c);
      const { ready } = deps.readiness();
      return c.json({ name: manifest.name, ready }, ready ? 200 : 503);
    });
  }

  const inferPaths = ["/v2/models/:model/infer", "/v2/models/:model/versions/:version/infer"];
  app.on("POST", inferPaths, async (c) => {
    const started = performance.now();
    const timing = new RequestTiming();
    requireModel(c);
    const headers = c.req.raw.headers;
    const body = await readLimitedBody(c.req.raw, config.limits.max_body_bytes, {
      timeoutMs: config.limits.body_timeout,
      faults: deps.inputFaults,
    });
    const request = decodeInferRequest(body, {
      model: { name: manifest.name, dModel: manifest.d_model },
      headerLength: parseHeaderLength(headers),
      maxTokens: config.limits.max_tokens,
      requestTypeHeader: headers.get(REQUEST_TYPE_HEADER),
    });
    timing.add("decode", timing.elapsed());
    const result = await engine.infer(request.tokens, request.rows, timing);
    const encodeFrom = performance.now();
    // The forward pass leaves its input intact; the recorder copies only rows it keeps.
    inputRecorder.offer(request.tokens, request.rows);
    const routedShape = [manifest.layers, request.rows, manifest.top_k];
    const available: Record<string, OutputTensor> = {
      [OUTPUT_TENSOR]: {
        name: OUTPUT_TENSOR,
        shape: [request.rows, manifest.d_model],
        data: result.output,
      },
      [EXPERT_IDS_TENSOR]: { name: EXPERT_IDS_TENSOR, shape: routedShape, data: result.expertIds },
      [EXPERT_WEIGHTS_TENSOR]: {
        name: EXPERT_WEIGHTS_TENSOR,
        shape: routedShape,
        data: result.expertWeights,
      },
    };
    const encoded = encodeInferResponse(
      {
        model_name: manifest.name,
        model_version: manifest.version,
        ...(request.id !== undefined ? { id: request.id } : {}),
        parameters: {
          backend: deps.backendId,
          // Says so on every answer when outputs come from the simulated executor.
          ...(deps.executionProvider === "simulated" ? { simulated: true } : {}),
          ...(request.requestType !== undefined ? { request_type: request.requestType } : {}),
        },
      },
      request.outputs.map((output) => available[output.name]!),
      new Set(request.outputs.filter((output) => output.binary).map((output) => output.name)),
    );
    logger.debug("inference", {
      rows: request.rows,
      request_type: request.requestType,
      ms: Math.round((performance.now() - started) * 100) / 100,
    });
    // The request's expert trace, for the router's request log (see shared/expert_trace.ts).
    const experts = expertCountsFromIds(result.expertIds, {
      layers: manifest.layers,
      rows: request.rows,
      topK: manifest.top_k,
    });
    timing.add("encode", performance.now() - encodeFrom);
    deps.phases?.observe(timing.finish());
    return new Response(encoded.body, {
      status: 200,
      headers: {
        ...encoded.headers,
        // Known here; also spares the node-resources byte count a stream wrapper.
        "content-length": String(encoded.body.byteLength),
        "x-switchyard-backend": deps.backendId,
        [EXPERTS_HEADER]: encodeExpertCounts(experts),
        [BATCHES_HEADER]: encodeBatchSizes(result.batchGroups),
        "server-timing": formatServerTiming(timing.metrics()),
      },
    });
  });

  return app;
}
