/**
 * @module The backend's inference route, `POST /v2/models/{model}[/versions/{v}]/infer`:
 * read (bounded in size and time), decode and check the values once, run the forward
 * pass, answer the outputs asked for (JSON or binary tensors) with the request's expert
 * trace, batch sizes and `Server-Timing`.
 */
import { Hono } from "hono";
import { parseHeaderLength } from "../../shared/header_length.ts";
import { readLimitedBody } from "../../shared/read_body.ts";
import { type DecodedInferRequest, decodeInferRequest } from "../../shared/infer_request_codec.ts";
import { formatServerTiming } from "../../shared/server_timing.ts";
import { RequestTiming } from "../timing/request_timing.ts";
import { encodeInferResponse, type OutputTensor } from "../../shared/infer_response_codec.ts";
import {
  BATCHES_HEADER,
  encodeBatchSizes,
  encodeExpertCounts,
  expertCountsFromIds,
  EXPERTS_HEADER,
} from "../../shared/expert_trace.ts";
import {
  EXPERT_IDS_TENSOR,
  EXPERT_WEIGHTS_TENSOR,
  OUTPUT_TENSOR,
  REQUEST_TYPE_HEADER,
} from "../../shared/oip.ts";
import type { MoeForwardResult } from "../engine/expert_forward.ts";
import type { InputRecorder } from "../advice/input_recorder.ts";
import type { BackendAppDeps } from "./backend_app_deps.ts";
import { requireModel } from "./require_model.ts";

const INFER_PATHS = ["/v2/models/:model/infer", "/v2/models/:model/versions/:version/infer"];

/**
 * The infer routes as a Hono app, mounted with `app.route("/", …)`; served input rows are
 * offered to `inputRecorder`.
 */
export function inferRoutes(deps: BackendAppDeps, inputRecorder: InputRecorder): Hono {
  const { config, engine, logger } = deps;
  const manifest = engine.manifest;
  const app = new Hono();
  app.on("POST", INFER_PATHS, async (c) => {
    const started = performance.now();
    const timing = new RequestTiming();
    requireModel(manifest, c);
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
    const encoded = encodeAnswer(request, result, deps);
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

/** The answer's body and headers: the outputs `request` asked for, binary where asked. */
function encodeAnswer(
  request: DecodedInferRequest,
  result: MoeForwardResult,
  deps: BackendAppDeps,
): ReturnType<typeof encodeInferResponse> {
  const manifest = deps.engine.manifest;
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
  return encodeInferResponse(
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
}
