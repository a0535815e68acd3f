/**
 * @module The Switchyard configuration: one zod schema for the file (YAML or JSON),
 * environment overrides, and the resolved form code past start-up sees.
 *
 * Env overrides: `SWITCHYARD_<SECTION>__<FIELD>=value` (double underscore nests,
 * case-insensitive), e.g. `SWITCHYARD_ROUTER__PORT=8081`. Values are parsed as JSON
 * when they parse, else taken as strings (`SWITCHYARD_ROUTER__BACKENDS=["http://…"]`).
 */
import { z } from "zod";
import { parse as parseYaml } from "yaml";
import { DurationSchema } from "./duration.ts";
import { AnnounceSchema, DiscoverySchema, LeaderSchema } from "./config_fleet.ts";
import { AdmissionSchema, OutlierSchema, RetrySchema } from "./config_overload.ts";

export { DurationSchema };

const HttpUrl = z.url({ protocol: /^https?$/ });

/** Schema of the configuration file. Every field has a default. */
export const ConfigSchema = z.object({
  model: z.object({
    /** Model directory holding `moe.json`. */
    dir: z.string().default("models/demo"),
  }).prefault({}),
  router: z.object({
    host: z.string().default("0.0.0.0"),
    port: z.int().min(0).max(65535).default(8080),
    /**
     * Entry-backend choice: power of two choices on in-flight work (`p2c`), the same
     * weighted by the backends' reported utilisation (`load`), or `round_robin`.
     */
    policy: z.enum(["p2c", "load", "round_robin"]).default("p2c"),
    backends: z.array(HttpUrl).default([]),
    health_interval: DurationSchema.default(1000),
    health_timeout: DurationSchema.default(1000),
    request_timeout: DurationSchema.default(30_000),
    /** Outlier detection, admission and retries (see `config_overload.ts`). */
    outlier: OutlierSchema,
    admission: AdmissionSchema,
    retry: RetrySchema,
    /**
     * HTTP version of the inference hop to backends: `http1` (keep-alive) or `http2`
     * (h2c with prior knowledge on `http://` backends). `deno task bench:hop` measures both.
     */
    backend_protocol: z.enum(["http1", "http2"]).default("http1"),
    /**
     * HTTPS: certificate and key files (PEM). `ca`: the CA certificate that signed `cert`,
     * for this router's clients (launcher probe, CLIs, `deno task traffic`); unset, they
     * trust `cert` itself (self-signed). The router does not read `ca`.
     */
    tls: z.object({ cert: z.string(), key: z.string(), ca: z.string().optional() }).optional(),
    /** Where the pool comes from: `backends` (static), DNS records, or announcements. */
    discovery: DiscoverySchema,
    /**
     * The HTTP server in front: `deno` (`Deno.serve`, the default: no connection cap and no
     * read timeouts on the socket — put a proxy with both in front) or `node` (`node:http`:
     * enforces `max_connections` and `header_timeout`, and closes slow-body sockets after
     * their 408). `deno` is the default because with `node` and its cap goodput collapsed at 3×
     * offered load in `bench:faults` (0.11 of capacity against 0.93 on `Deno.serve`): clients beyond
     * the cap reconnect into it and the refusals take the CPU (docs/BENCHMARKS.md).
     */
    http_server: z.enum(["node", "deno"]).default("deno"),
    /**
     * Client connections open at once (`http_server: node`); one beyond gets 503 +
     * Retry-After to its first request and is closed. Router memory follows open
     * connections (docs/results/conn_cost.md).
     */
    max_connections: z.int().min(1).max(1_000_000).default(1024),
    /**
     * A connection must send a whole first request head within this time of opening; else
     * it is closed (`http_server: node`).
     */
    header_timeout: DurationSchema.pipe(z.number().min(1)).default(10_000),
    /**
     * A keep-alive connection with no new request this long after its last answer is closed
     * (`http_server: node`). Longer than a proxy's upstream idle timeout (often 60 s), so
     * the proxy, not the router, closes first.
     */
    idle_timeout: DurationSchema.pipe(z.number().min(1)).default(75_000),
  }).prefault({}),
  backend: z.object({
    host: z.string().default("127.0.0.1"),
    port: z.int().min(0).max(65535).default(9001),
    /** Name reported in load data and logs; defaults to `host:port`. */
    id: z.string().optional(),
    /**
     * Where onnxruntime runs: 0 = the backend's main thread (the default: no thread
     * crossings; run one backend process per core), N = N executor Workers (one ORT
     * session set each; one message per execution each way). `bench:baseline` compares.
     */
    executors: z.int().min(0).max(64).default(0),
    /**
     * How experts run: `layer` — per layer one composed execution of every expert hosted
     * here (plus shared experts and the next gate); `expert` — one session per expert
     * (the old path, kept for comparison). The simulated executor takes either.
     */
    execution: z.enum(["layer", "expert"]).default("layer"),
    /**
     * `onnx` runs the model. `simulated` spends a configured device time per execution
     * instead of computing (on the layer path the gates still run, so routing is the
     * model's) — for pool-scale benchmarks only; responses say so.
     */
    executor: z.enum(["onnx", "simulated"]).default("onnx"),
    /**
     * Device time per execution of the simulated executor: `fixed_ms + per_row_ms·rows`,
     * rows in expert rows (a layer execution: assignments + entry rows × shared experts +
     * the fused gate's share), plus `per_expert_ms` for each routed expert a layer
     * execution gives rows (its weights read once); `gpu-backend/layer/calibrate_layer.ts`
     * measures the three.
     */
    simulated: z.object({
      fixed_ms: z.number().min(0).default(0.2),
      per_row_ms: z.number().min(0).default(0.01),
      per_expert_ms: z.number().min(0).default(0),
      /**
       * Load time of a routed expert (cold start, residency): `load_fixed_ms +
       * load_ms_per_mb·MiB`; defaults measured for onnxruntime on CPU here (~80 ms for a
       * 2 MiB demo expert: session creation on every Worker).
       */
      load_fixed_ms: z.number().min(0).default(40),
      load_ms_per_mb: z.number().min(0).default(20),
    }).prefault({}),
    /** Execution providers tried in order; the backend falls back explicitly. */
    execution_providers: z.array(z.enum(["cuda", "cpu"])).min(1).default(["cuda", "cpu"]),
    /**
     * CUDA provider options. onnxruntime-node passes only the device id to the CUDA
     * provider (its CUDA arena and IO binding are not reachable from Node).
     */
    cuda: z.object({ device_id: z.int().min(0).default(0) }).prefault({}),
    /** ORT's host memory arena (`enableCpuMemArena`): faster allocation, memory kept. */
    memory_arena: z.boolean().default(true),
    /**
     * Layer path, while a layer's rows for peers are in flight: `always` runs the local
     * experts meanwhile and adds the peers' results after (the next gate then runs on its
     * own); `never` (default) waits for the peers and folds their results into the one
     * layer execution (fused gate kept); `auto` overlaps only when the executor would
     * otherwise idle (nothing queued). Measured on 2 CPU cores shared by every process
     * (`deno task bench:peer-hop`, docs/results/peer_hop.md), overlapping pays nothing: the
     * peer's execution and the local one contend for the same cores and the extra gate run
     * adds work (idle +1.9–2.0 ms per crossing layer vs +1.7 never; throughput −4–10 %).
     * `auto` is for pools where each backend has a device of its own.
     */
    overlap_hops: z.enum(["auto", "always", "never"]).default("never"),
    /** Rows waiting for execution before the backend answers 503. */
    max_queued_rows: z.int().positive().default(65_536),
    /**
     * Expert residency: MiB of expert weights kept loaded (warm). Unset: every hosted
     * expert stays warm. Beyond it, least-recently-used experts not pinned by the
     * current or staged plan are evicted; a cold expert is loaded on first use.
     */
    memory_budget_mb: z.number().positive().optional(),
    /** Register discovery: heartbeats announcing this backend to the routers. */
    announce: AnnounceSchema,
  }).prefault({}),
  pool: z.object({
    /** Backends the local launcher starts. */
    backends: z.int().min(1).max(32).default(2),
    base_port: z.int().min(1).max(65535).default(9001),
  }).prefault({}),
  limits: z.object({
    max_body_bytes: z.int().positive().default(16 * 1024 * 1024),
    max_tokens: z.int().positive().default(2048),
    /**
     * A request body must arrive whole within this time of the handler reading it; beyond
     * it: 408 with `Connection: close` (slow-body clients); the router's `node` server then
     * closes the socket (`Deno.serve` cannot while the body read is pending).
     */
    body_timeout: DurationSchema.default(10_000),
    /** Open dashboard streams (`/api/stream`), all clients together; beyond: 503. */
    sse_streams: z.int().min(1).max(10_000).default(32),
    /** Open dashboard streams from one client address; beyond: 429. */
    sse_streams_per_client: z.int().min(1).max(10_000).default(4),
  }).prefault({}),
  auth: z.object({
    /** Bearer token for state-changing admin endpoints. */
    admin_token: z.string().min(16).optional(),
    /** Bearer token the router presents to backends; backends require it when set. */
    internal_token: z.string().min(16).optional(),
    /**
     * When set, the dashboard pages, their files and streams need it (or the admin token):
     * as a bearer token, or once as `?token=` on a page, which sets a cookie for the rest.
     */
    viewer_token: z.string().min(16).optional(),
    /**
     * What `viewer_token` also covers beyond the dashboard: `api` (every GET/HEAD under
     * `/api/`), `metrics` (`/metrics`; scrape with the token as bearer credentials).
     */
    viewer_covers: z.array(z.enum(["api", "metrics"])).default([]),
  }).prefault({}),
  expert_balancer: z.object({
    enabled: z.boolean().default(true),
    /**
     * `dynamic`: start from the static placement, re-plan when balancedness falls below
     * `threshold`; `static`: contiguous expert blocks per backend, never moved; `off`:
     * no placement, every backend hosts every expert.
     */
    strategy: z.enum(["dynamic", "static", "off"]).default("dynamic"),
    /**
     * With `dynamic`: `auto` weighs full replication (every backend hosts every expert, as a
     * plan) against expert parallelism by a cost model when every expert fits every
     * backend's memory budget; `expert_parallel` never replicates everything;
     * `full_replication` replicates everything whenever it fits.
     */
    placement: z.enum(["auto", "expert_parallel", "full_replication"]).default("auto"),
    /**
     * Re-plan when the worst layer's predicted balancedness stays below this. 0.93: in the
     * simulator (256 × 32, compressed day, move-minimising re-plans) the lowest threshold
     * that keeps ≥ 95 % of real-minute samples at ≥ 0.95 (docs/results/sim-threshold.md).
     */
    threshold: z.number().gt(0).max(1).default(0.93),
    /** At most one plan switch per interval, unless the worst layer gains `switch_gain`. */
    adjust_interval: DurationSchema.default(60_000),
    /** How often the balancer evaluates (detection; switching is bounded by adjust_interval). */
    evaluate_interval: DurationSchema.default(2_000),
    /** Time constant of the short load window the balancer detects and plans on. */
    detect_window: DurationSchema.default(5_000),
    /** A predicted worst-layer gain this large switches even within adjust_interval. */
    switch_gain: z.number().gt(0).max(1).default(0.15),
    /** Extra slots per backend beyond `ceil(experts / backends)`, as a fraction (replicas). */
    redundancy: z.number().min(0).max(4).default(0.25),
    /** Load window the planner sees (EWMA time constant of expert load). */
    window: DurationSchema.default(60_000),
    /**
     * When no replica of an expert is reachable: `load_local` loads it on the entry
     * backend on demand (every backend has the model files; slower, never wrong),
     * `fail` answers 503 naming the expert.
     */
    on_unreachable: z.enum(["load_local", "fail"]).default("load_local"),
  }).prefault({}),
  state: z.object({
    /**
     * Deno KV location: a file path (embedded SQLite, the default), `:memory:`, or a
     * KV Connect URL (`https://…`, with `DENO_KV_ACCESS_TOKEN` in the environment), or
     * `deploy`: Deno Deploy's managed KV (`Deno.openKv()` with no argument).
     */
    kv: z.string().default("data/switchyard.kv"),
    /**
     * When the KV cannot be opened or read: `true` stops the router at start with the
     * reason; `false` runs without plans, history, series, events and alerts, and
     * readiness answers 503 saying why.
     */
    required: z.boolean().default(true),
    /**
     * The id of the pool this state steers, sent with every plan call: backends follow one
     * pool's plans and refuse another's (409). Default: generated once and kept in
     * `state.kv`, so routers sharing the KV share it (with `:memory:` a new one per start).
     */
    pool_id: z.string().min(1).max(200).optional(),
  }).prefault({}),
  /** One router among many runs the control loops, elected by a lease in `state.kv`. */
  leader: LeaderSchema,
  batching: z.object({
    /** `adaptive` (default), or a static baseline: `fixed-N`, `delay-Dms`. */
    policy: z.string().regex(
      /^(adaptive|fixed-\d+|delay-\d+(\.\d+)?ms)$/,
      "must be adaptive, fixed-N or delay-Dms",
    )
      .default("adaptive"),
    min: z.int().min(1).default(2),
    max: z.int().min(1).max(256).default(16),
    max_wait_ms: z.number().min(0).max(1000).default(2),
    /** Budget for filling plus executing one micro-batch. */
    latency_budget_ms: z.number().positive().default(50),
    /**
     * Layer path: how long a new request may wait at layer 0 for company while more
     * are expected (arrival rate × this ≥ 1), capped at `max_wait_ms`; 0 = off.
     */
    fill_wait_ms: z.number().min(0).max(1000).default(0),
    /** Row cap of one execution. */
    max_rows: z.int().positive().default(1024),
  }).prefault({}).refine((b) => b.min <= b.max, { message: "min must be <= max", path: ["min"] }),
  gate: z.object({
    temperature: z.number().gt(0).max(100).default(1),
    /**
     * The advisor recommends a routing-only expert bias only when it moves the model's
     * outputs by at most this relative L2 distance on recorded inputs.
     */
    bias_deviation_budget: z.number().min(0).max(1).default(0.05),
  }).prefault({}),
  alerts: z.object({
    /**
     * An expert whose routed load exceeds this share of the pool's capacity for it
     * (its replicas × each replica backend's per-expert share) alerts.
     */
    expert_load_threshold: z.number().gt(0).max(1).default(0.8),
    /** Router request latency p99 (ms, over `latency_window`) above which the SLO alert fires. */
    latency_p99_ms: z.number().positive().default(1000),
    /** Window of the latency SLO. */
    latency_window: DurationSchema.default(60_000),
    /** Share of requests backends refuse (503) above which the shedding alert fires. */
    shed_ratio: z.number().min(0).max(1).default(0.01),
    /** Pool saturation (mean over backends) at or above which the saturation alert fires. */
    saturation: z.number().gt(0).max(1).default(0.9),
    /** Consecutive load rounds (~1 s each) a condition must hold before it fires. */
    raise_after: z.int().min(1).default(3),
    /** Consecutive rounds it must be gone before the alert resolves (no flapping). */
    clear_after: z.int().min(1).default(10),
    /** Optional URL receiving a JSON POST when an alert fires or resolves. */
    webhook: HttpUrl.optional(),
    /**
     * Body of `webhook`: `switchyard` (one POST per fire/resolve, the alert as the API
     * shows it) or `alertmanager` (Alertmanager's v4 webhook body, grouped by alertname
     * per evaluation).
     */
    webhook_format: z.enum(["switchyard", "alertmanager"]).default("switchyard"),
    /** Optional Alertmanager base URL: alerts are pushed to its `/api/v2/alerts`. */
    alertmanager: HttpUrl.optional(),
  }).prefault({}),
  metrics: z.object({
    /**
     * Routed-token series: `expert` (per layer × expert; layers·experts series per
     * backend), `top` (per layer the `top_experts` hottest experts plus `expert="other"`;
     * layers·(top_experts + 1) series) or `backend` (per layer only).
     */
    expert_detail: z.enum(["expert", "top", "backend"]).default("expert"),
    /** N of `expert_detail: top`: hottest experts per layer kept as their own series. */
    top_experts: z.int().min(1).max(1024).default(8),
  }).prefault({}),
  log: z.object({
    level: z.enum(["debug", "info", "warn", "error"]).default("info"),
    /** One JSON line per inference request (router). */
    requests: z.boolean().default(true),
    /** Local log files (the embedded log store); `""` writes stdout only. */
    dir: z.string().default("data/logs"),
    /** A log file is rotated at this size; `max_files` rotated files are kept. */
    max_file_bytes: z.int().positive().default(10 * 1024 * 1024),
    max_files: z.int().min(1).max(100).default(5),
  }).prefault({}),
  loki: z.object({
    /** Grafana Loki base URL (e.g. `http://loki:3100`); logs are shipped when set. */
    url: HttpUrl.optional(),
    /** Sent as `X-Scope-OrgID` (multi-tenant Loki). */
    tenant: z.string().min(1).optional(),
    /** Lines are pushed in batches at this interval. */
    batch_interval: DurationSchema.default(1000),
    /** Lines held while Loki is unreachable; beyond it the oldest are dropped (counted). */
    max_buffer_lines: z.int().positive().default(10_000),
    timeout: DurationSchema.default(5000),
  }).prefault({}),
  traffic: z.object({
    /** Width of one traffic-series bucket. */
    bucket: DurationSchema.default(60_000),
    /** Buckets older than this are deleted. */
    retention: DurationSchema.default(14 * 24 * 3_600_000),
  }).prefault({}),
  prewarm: z.object({
    enabled: z.boolean().default(true),
    /** How far ahead the pre-warm job predicts (at least the lead time). */
    horizon: DurationSchema.default(15 * 60_000),
    /** Capacity is sized for this utilisation of each backend's measured capacity. */
    threshold: z.number().gt(0).max(1).default(0.8),
    /**
     * Lead time before any backend's cold start was measured (assumed; the seed's
     * practice, one hour). Once measured: the `cold_start_percentile` of the measured
     * cold starts × (1 + `lead_margin`) + one job interval.
     */
    lead_time: DurationSchema.default(3_600_000),
    cold_start_percentile: z.number().gt(0).max(1).default(0.95),
    lead_margin: z.number().min(0).max(10).default(0.25),
    /**
     * `advisory` reports only; `local` asks the launcher (`deno task start`) to start and
     * stop backend processes; `kubernetes` publishes the desired backend count for KEDA
     * or an HPA (`GET /api/prewarm/desired`, `switchyard_prewarm_desired_backends`);
     * `webhook` POSTs target and deadline.
     */
    scaler: z.enum(["advisory", "local", "kubernetes", "webhook"]).default("advisory"),
    scaler_webhook: HttpUrl.optional(),
    /** Time limit of one scaler call (webhook, launcher). */
    scaler_timeout: DurationSchema.default(5000),
    /** The launcher's control URL (`local` scaler; `deno task start` sets it). */
    launcher_url: HttpUrl.optional(),
    /**
     * Tokens/s one backend serves at full use, when known (a benchmark); unset: estimated
     * from the backends' load reports (the saturation signal).
     */
    capacity_per_backend: z.number().positive().optional(),
    /** Fewest backends; default the pool's configured size. */
    min_backends: z.int().min(1).max(1024).optional(),
    /** Most backends; default none (the pool's size never clamps a plan). */
    max_backends: z.int().min(1).max(1024).optional(),
    /** A requested backend not ready after this is reported stuck (logged, alerted). */
    ready_timeout: DurationSchema.default(15 * 60_000),
    /** Capacity is given back only after the need stayed below it this long. */
    scale_down_hold: DurationSchema.default(10 * 60_000),
    /** How often an open contract's readiness, staging and activation are checked. */
    track_interval: DurationSchema.default(5000),
  }).prefault({}).refine((p) => p.scaler !== "webhook" || p.scaler_webhook !== undefined, {
    message: "must be set when prewarm.scaler is webhook",
    path: ["scaler_webhook"],
  }).refine(
    (p) =>
      p.min_backends === undefined || p.max_backends === undefined ||
      p.min_backends <= p.max_backends,
    { message: "must not be below prewarm.min_backends", path: ["max_backends"] },
  ),
});

/** The resolved configuration (defaults applied, durations in ms). */
export type Config = z.infer<typeof ConfigSchema>;

/**
 * What a backend reads of the configuration: one file format and one env override
 * scheme for both sides (`resolveConfig` parses the whole), but backend code takes only
 * these sections, so a section it does not read cannot change it.
 */
export type BackendConfig = Pick<
  Config,
  "model" | "backend" | "auth" | "limits" | "batching" | "gate" | "expert_balancer" | "metrics"
>;

/** What a router reads of the configuration (see {@linkcode BackendConfig}). */
export type RouterConfig = Pick<
  Config,
  | "router"
  | "auth"
  | "limits"
  | "expert_balancer"
  | "state"
  | "leader"
  | "batching"
  | "gate"
  | "alerts"
  | "log"
  | "loki"
  | "traffic"
  | "prewarm"
>;

/** A configuration that does not parse; the message names the field. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}

/** Drops `null` values: an empty YAML section (`auth:`) means "all defaults". */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value) || typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]),
  );
}

function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Options of {@linkcode resolveConfig}. */
export interface ResolveConfigOptions {
  /** Contents of the config file (YAML or JSON), if any. */
  fileText?: string;
  /** Environment; `SWITCHYARD_*__*` variables override file values. */
  env?: Record<string, string>;
}

/** Parses file text and env overrides into a resolved config; throws {@linkcode ConfigError}. */
export function resolveConfig(options: ResolveConfigOptions = {}): Config {
  let raw: unknown = {};
  if (options.fileText !== undefined && options.fileText.trim() !== "") {
    try {
      raw = parseYaml(options.fileText) ?? {};
    } catch (error) {
      throw new ConfigError(
        `Invalid config: file is not valid YAML/JSON (${(error as Error).message})`,
      );
    }
    if (typeof raw !== "object" || Array.isArray(raw)) {
      throw new ConfigError("Invalid config: file must hold a mapping at the top level");
    }
  }
  const merged = withoutNulls(raw) as Record<string, unknown>;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    const match = /^SWITCHYARD_(.+__.+)$/i.exec(name);
    if (!match) continue;
    setPath(merged, match[1]!.toLowerCase().split("__"), parseValue(value));
  }
  const parsed = ConfigSchema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`Invalid config: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}
