// deno-lint-ignore-file no-console
/**
 * @module The edge entry: the router for Deno Deploy and `deno serve`-style hosts.
 *
 *   deno serve --allow-net --allow-env router/edge.ts        (add --port, --host as needed)
 *   deno task edge --port 8080                               (router/edge_serve.ts: the same,
 *                                                             listening where --port/--host say)
 *
 * Differences from `main.ts`, all for hosts without a file system or processes:
 * - `Deno.cron` is registered here, at module top level and unconditionally (Deploy only
 *   picks up crons registered that way); its handler, {@linkcode cronHandler}, runs the
 *   pre-warm job on the leader. Hosts without cron POST `/api/cron/prewarm` (admin token).
 * - State: `state.kv: deploy` (the default on Deploy, where `DENO_DEPLOYMENT_ID` is set)
 *   opens Deploy's managed KV with `Deno.openKv()`. Elsewhere `state.kv` must name the KV
 *   the other routers of the pool share (a KV Connect URL) — or `:memory:` for a router
 *   that runs alone: plans carry the pool id kept in that state, and backends steered by
 *   another pool refuse this router's (409). A file KV needs read and write permission the
 *   entry is not given: start-up stops with one line naming the setting to change.
 * - The dashboard is served from the bundle generated at build time (`assets_bundle.ts`),
 *   never read from files; logs go to stdout (and Loki with `loki.url`), never to files.
 * - Config from `SWITCHYARD_*` variables; `SWITCHYARD_CONFIG` may name a file (then also
 *   grant `--allow-read=<that file>`). No write or subprocess permission is needed: the
 *   `local` pre-warm scaler (which starts processes) is refused.
 */
import { hasBearerToken } from "../shared/bearer_token.ts";
import { type Config, ConfigError } from "../shared/config.ts";
import { loadConfig } from "../shared/config_file.ts";
import { createServiceLogger } from "../shared/logging/service_logger.ts";
import { embeddedAssets } from "./operate/dashboard/embedded_assets.ts";
import { buildRouter, type BuiltRouter } from "./wire/server.ts";

// Step 1: the cron, before any await (Deploy reads top-level registrations).
// Assigned below, after the awaits the cron registration must not wait for.
// deno-lint-ignore prefer-const
let router: Promise<BuiltRouter> | undefined;

/** The `Deno.cron` handler: one pre-warm run when this router leads. */
export async function cronHandler(): Promise<string> {
  if (router === undefined) return "not started";
  return await (await router).runCron();
}

Deno.cron("switchyard-prewarm", "* * * * *", async () => {
  try {
    await cronHandler();
  } catch (error) {
    console.error(`Cannot run the pre-warm cron: ${(error as Error).message}`);
  }
});

/** The edge's config: env (and `SWITCHYARD_CONFIG`), with edge defaults. */
export async function edgeConfig(env: Record<string, string>): Promise<Config> {
  const defaults: Record<string, string> = {
    // No log files on the edge: stdout (and Loki when configured).
    SWITCHYARD_LOG__DIR: "",
    ...(env["DENO_DEPLOYMENT_ID"] !== undefined ? { SWITCHYARD_STATE__KV: "deploy" } : {}),
  };
  const config = await loadConfig([], { ...defaults, ...env });
  const kv = config.state.kv;
  const fileKv = kv !== ":memory:" && kv !== "deploy" && !/^https?:\/\//.test(kv);
  if (fileKv && Deno.permissions.querySync({ name: "write", path: kv }).state !== "granted") {
    throw new ConfigError(
      `Invalid config: state.kv: "${kv}" is a file, which the edge entry (net + env only) cannot write; ` +
        "set SWITCHYARD_STATE__KV to the KV the pool's other routers share (a KV Connect https:// URL, " +
        'or "deploy" on Deno Deploy), or to ":memory:" for a router that runs alone',
    );
  }
  if (config.prewarm.scaler === "local") {
    throw new ConfigError(
      "Invalid config: prewarm.scaler: local starts processes, which the edge entry cannot; use advisory or webhook",
    );
  }
  return config;
}

// Step 2: config (a bad one stops here with one line, no stack trace), logs and the router.
const config = await edgeConfig(Deno.env.toObject()).catch((error) => {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  Deno.exit(1);
});

/** Where `deno task edge` listens unless `--port`/`--host` say otherwise (`router.port`, `router.host`). */
export const edgeListen = { port: config.router.port, host: config.router.host };
const logs = createServiceLogger(config, { service: "router" });
router = buildRouter(config, {
  logger: logs.logger,
  logShipping: logs.stats,
  assets: embeddedAssets(),
  registerCron: false,
});
const built = await router;
await built.start();
logs.logger.info("router listening", {
  event: "start",
  entry: "edge",
  router: built.fleet.id,
  discovery: config.router.discovery.mode,
  state: config.state.kv,
});

// `deno serve` hosts stop with SIGTERM: stop the router's loops so the process can exit.
// Deno Deploy has no signal listeners (it ends isolates itself): nothing to do there.
try {
  Deno.addSignalListener("SIGTERM", () => void built.stop().finally(() => Deno.exit(0)));
} catch { /* no signals on this host */ }

const CRON_PATH = "/api/cron/prewarm";

/** Serves the router, plus `POST /api/cron/prewarm` for hosts without `Deno.cron`. */
async function fetch(request: Request): Promise<Response> {
  if (new URL(request.url).pathname !== CRON_PATH) return await built.app.fetch(request);
  const json = (body: unknown, status: number) =>
    Response.json(body, { status, headers: { "cache-control": "no-store" } });
  if (request.method !== "POST") {
    return json({ error: "Cannot run the cron: use POST", code: "bad_request" }, 405);
  }
  const token = config.auth.admin_token;
  if (token === undefined) {
    return json(
      { error: "Cannot run the cron: no admin token configured", code: "forbidden" },
      403,
    );
  }
  if (!hasBearerToken(request.headers, token)) {
    return json({
      error: "Cannot run the cron: missing or wrong admin token",
      code: "unauthorized",
    }, 401);
  }
  return json({ cron: "prewarm", result: await cronHandler() }, 200);
}

export default { fetch } satisfies Deno.ServeDefaultExport;
