/**
 * @module A fake backend implementing the backend HTTP contract (model "tiny",
 * d_model 4, output = 2 × input; `/v2/load` answers whatever `loadReport` returns,
 * 404 while it is unset) and a fake network whose `fetch` dispatches to fake
 * backends by host, so router tests run without sockets. Each backend records what it
 * received and can be switched into failure modes.
 */
import { Hono } from "hono";
import { ApiError, errorResponse } from "../../../shared/errors.ts";
import { decodeInferRequest } from "../../../shared/infer_request_codec.ts";
import { encodeInferResponse, type OutputTensor } from "../../../shared/infer_response_codec.ts";
import type { LoadReport } from "../../../shared/load_report.ts";
import {
  HEADER_LENGTH_HEADER,
  type ModelMetadata,
  REQUEST_TYPE_HEADER,
} from "../../../shared/oip.ts";
import type { FetchLike } from "../../../router/runtime/fetch_like.ts";

/** How a fake backend behaves. */
export type FakeMode =
  /** Serves the contract. */
  | "ok"
  /** `/v2/health/ready` answers 503; inference still works. */
  | "unready"
  /** Every connection fails (the network `fetch` throws a TypeError). */
  | "refuse"
  /** Requests never answer until aborted. */
  | "hang"
  /** The inference handler throws (the backend answers 500). */
  | "crash"
  /** The network `fetch` throws a plain Error (not a TypeError). */
  | "explode"
  /** Inference answers 503 with `Retry-After: 2`. */
  | "overloaded"
  /** The answer's head (200, its content-length) arrives, then the connection resets. */
  | "reset_mid_body";

/** One request a fake backend received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Headers;
  body: Uint8Array;
}

/** Options of {@linkcode FakeBackend}. */
export interface FakeBackendOptions {
  /** `host:port`; the backend answers at `http://{id}`. */
  id: string;
  /** Token required on every endpoint but liveness. */
  internalToken?: string;
  model?: string;
  dModel?: number;
  /** Extra ready `details`. */
  details?: Record<string, unknown>;
}

/** Model metadata as a backend serves it. */
export function fakeMetadata(name: string, dModel: number): ModelMetadata {
  return {
    name,
    versions: ["1"],
    platform: "switchyard_moe_onnx",
    inputs: [{ name: "input", datatype: "FP32", shape: [-1, dModel] }],
    outputs: [{ name: "output", datatype: "FP32", shape: [-1, dModel] }],
    parameters: { d_model: dModel, layers: 2, experts: 4, top_k: 2 },
  };
}

/** A backend speaking the contract, in memory. */
export class FakeBackend {
  readonly id: string;
  readonly url: string;
  readonly app: Hono;
  readonly received: ReceivedRequest[] = [];
  mode: FakeMode = "ok";
  /** Versions its model metadata lists. */
  versions: string[] = ["1"];
  /** Answers `GET /v2/load` (a throw answers 500); unset answers 404. */
  loadReport: (() => LoadReport) | undefined = undefined;

  constructor(options: FakeBackendOptions) {
    this.id = options.id;
    this.url = `http://${options.id}`;
    const model = options.model ?? "tiny";
    const dModel = options.dModel ?? 4;
    const app = new Hono();
    app.onError((error) =>
      error instanceof ApiError ? errorResponse(error) : Response.json({ error: "boom" }, {
        status: 500,
      })
    );
    app.use("*", async (c, next) => {
      const body = new Uint8Array(await c.req.raw.clone().arrayBuffer());
      this.received.push({
        method: c.req.method,
        path: c.req.path,
        headers: c.req.raw.headers,
        body,
      });
      const token = options.internalToken;
      if (token && c.req.path !== "/v2/health/live") {
        if (c.req.header("authorization") !== `Bearer ${token}`) {
          throw new ApiError(
            "unauthorized",
            "Cannot serve request: missing or wrong internal token",
          );
        }
      }
      await next();
    });
    const requireModel = (name: string) => {
      if (name !== model) throw new ApiError("not_found", `Cannot find model "${name}"`);
    };
    app.get("/v2/health/live", (c) => c.json({ live: true }));
    app.get("/v2/health/ready", (c) => {
      const ready = this.mode !== "unready";
      const details = { backend_id: this.id, execution_provider: "cpu", ...options.details };
      return c.json({ ready, details }, ready ? 200 : 503);
    });
    app.get("/v2/load", (c) => {
      if (this.loadReport === undefined) throw new ApiError("not_found", "Cannot find route");
      return c.json(this.loadReport());
    });
    app.get("/v2/models/:model", (c) => {
      requireModel(c.req.param("model"));
      return c.json({ ...fakeMetadata(model, dModel), versions: this.versions });
    });
    app.get("/v2/models/:model/ready", (c) => {
      requireModel(c.req.param("model"));
      return c.json({ ready: this.mode !== "unready" }, this.mode === "unready" ? 503 : 200);
    });
    app.post("/v2/models/:model/infer", async (c) => {
      requireModel(c.req.param("model"));
      if (this.mode === "crash") throw new Error("backend blew up");
      if (this.mode === "overloaded") {
        throw new ApiError("overloaded", "Cannot run inference: queue full", { retryAfterS: 2 });
      }
      const header = c.req.header(HEADER_LENGTH_HEADER);
      const request = decodeInferRequest(new Uint8Array(await c.req.arrayBuffer()), {
        model: { name: model, dModel },
        headerLength: header === undefined ? null : Number(header),
        maxTokens: 1_000_000,
        requestTypeHeader: c.req.header(REQUEST_TYPE_HEADER) ?? null,
      });
      const output: OutputTensor = {
        name: "output",
        shape: [request.rows, dModel],
        data: request.tokens.map((value) => value * 2),
      };
      const encoded = encodeInferResponse(
        { model_name: model, parameters: { backend: this.id } },
        [output],
        new Set(request.outputs.filter((o) => o.binary).map((o) => o.name)),
      );
      return new Response(encoded.body as Uint8Array<ArrayBuffer>, {
        headers: {
          ...encoded.headers,
          "x-backend-private": "not-for-clients",
          // As a real backend says where its time went (the router passes it on).
          "server-timing": "exec;dur=0.001, backend;dur=0.002",
        },
      });
    });
    this.app = app;
  }

  /** Inference requests received so far. */
  inferences(): ReceivedRequest[] {
    return this.received.filter((request) => request.path.endsWith("/infer"));
  }
}

function hang(signal: AbortSignal | null | undefined): Promise<Response> {
  return new Promise((_, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** A set of fake backends reachable through {@linkcode FakeNetwork.fetch}. */
export class FakeNetwork {
  readonly #backends = new Map<string, FakeBackend>();

  constructor(backends: FakeBackend[]) {
    for (const backend of backends) this.#backends.set(backend.id, backend);
  }

  /** Dispatches by host to a fake backend, honouring its failure mode and abort signals. */
  readonly fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    const backend = this.#backends.get(new URL(request.url).host);
    if (backend === undefined || backend.mode === "refuse") {
      throw new TypeError("error sending request: Connection refused (os error 111)");
    }
    if (backend.mode === "explode") throw new Error("network stack exploded");
    if (backend.mode === "hang") return await hang(request.signal);
    const response = onTheWire(await backend.app.fetch(request));
    return backend.mode === "reset_mid_body" ? resetMidBody(await response) : await response;
  };
}

/** `response` as a fetch over HTTP sees it: a fixed body declares its content-length. */
async function onTheWire(response: Response): Promise<Response> {
  if (response.body === null || response.headers.has("content-length")) return response;
  const body = new Uint8Array(await response.arrayBuffer());
  const headers = new Headers(response.headers);
  headers.set("content-length", String(body.byteLength));
  return new Response(body, { status: response.status, headers });
}

/** `response`'s head with a body that fails after its first byte, as a reset peer's does. */
function resetMidBody(response: Response): Response {
  const whole = response.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value } = await whole.read();
      void whole.cancel();
      if (value !== undefined) controller.enqueue(value.subarray(0, 1));
      controller.error(
        new TypeError("error reading a body from connection: Connection reset by peer"),
      );
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}
