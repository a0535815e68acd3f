/**
 * @module Backend process entry point: reads config (file + env), starts the backend,
 * stops cleanly on SIGINT/SIGTERM. The only backend file that reads `Deno.env`.
 */
import { type Config, ConfigError } from "../shared/config.ts";
import { loadConfig } from "../shared/config_file.ts";
import { createJsonLogger } from "../shared/logger.ts";
import { startBackend } from "./server/start_backend.ts";

let config: Config;
try {
  config = await loadConfig(Deno.args, Deno.env.toObject());
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  Deno.stderr.writeSync(new TextEncoder().encode(`${error.message}\n`));
  Deno.exit(1);
}

const logger = createJsonLogger({
  level: config.log.level,
  base: {
    service: "backend",
    backend: config.backend.id ?? `${config.backend.host}:${config.backend.port}`,
  },
});
const backend = await startBackend(config, logger).catch((error) => {
  logger.error("backend failed to start", { error: (error as Error).message });
  Deno.exit(1);
});

let stopping = false;
async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info("backend stopping", { signal });
  await backend.close();
  Deno.exit(0);
}
Deno.addSignalListener("SIGINT", () => void stop("SIGINT"));
Deno.addSignalListener("SIGTERM", () => void stop("SIGTERM"));
