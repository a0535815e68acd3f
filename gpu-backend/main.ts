/**
 * @module Backend process entry point: reads config (file + env), starts the backend,
 * stops cleanly on SIGINT/SIGTERM. The only backend file that reads `Deno.env`.
 */
import { type Config, ConfigError } from "../shared/config.ts";
import { loadConfig } from "../shared/config_file.ts";
import { createServiceLogger } from "../shared/logging/service_logger.ts";
import { startBackend } from "./server/start_backend.ts";
import { Announcer } from "./announce/announcer.ts";

if (Deno.args.includes("--help") || Deno.args.includes("-h")) {
  Deno.stdout.writeSync(new TextEncoder().encode(`Usage: deno task backend [--config <file>]

Runs one backend: loads model.dir, serves OIP v2 (internal: loopback, internal token) and
reports its load to the router. Config from --config or SWITCHYARD_CONFIG (YAML/JSON), each
field overridable as SWITCHYARD_<SECTION>__<FIELD> (e.g. SWITCHYARD_BACKEND__PORT=9003);
every field with its default: deploy/switchyard.example.yaml. deno task start runs several.

Options:
      --config <file>  configuration file
  -h, --help           show this help and exit
`));
  Deno.exit(0);
}

let config: Config;
try {
  config = await loadConfig(Deno.args, Deno.env.toObject());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  Deno.stderr.writeSync(new TextEncoder().encode(`${error.message}\n`));
  Deno.exit(1);
}

// stdout, rotating files under log.dir, Loki when loki.url is set.
const logs = createServiceLogger(config, {
  service: "backend",
  instance: config.backend.id ?? `${config.backend.host}:${config.backend.port}`,
});
const logger = logs.logger;
const backend = await startBackend(config, logger, {
  cudaVisibleDevices: Deno.env.get("CUDA_VISIBLE_DEVICES"),
}).catch(async (error) => {
  logger.error("backend failed to start", { error: (error as Error).message });
  await logs.close();
  Deno.exit(1);
});

// Register discovery: heartbeats to the routers (backend.announce.router).
const { announce } = config.backend;
const announcer = announce.router === undefined ? undefined : new Announcer({
  router: announce.router,
  url: announce.url ?? backend.url,
  id: backend.backendId,
  intervalMs: announce.interval,
  internalToken: config.auth.internal_token,
  logger,
});
await announcer?.start();

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info("backend stopping", { event: "stop", signal });
  await announcer?.stop();
  await backend.close();
  await logs.close();
  Deno.exit(0);
}
Deno.addSignalListener("SIGINT", () => void stop("SIGINT"));
Deno.addSignalListener("SIGTERM", () => void stop("SIGTERM"));
