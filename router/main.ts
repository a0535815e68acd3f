// deno-lint-ignore-file no-console
/**
 * @module Router entry point: `deno run -A router/main.ts [--config <path>]`.
 *
 * The only file that reads `Deno.env`. Config comes from `--config` or
 * `SWITCHYARD_CONFIG` (YAML or JSON), with `SWITCHYARD_<SECTION>__<FIELD>` overrides.
 */
import { type Config, ConfigError } from "../shared/config.ts";
import { loadConfig } from "../shared/config_file.ts";
import { createServiceLogger } from "../shared/logging/service_logger.ts";
import { startRouter } from "./wire/server.ts";

function onSignals(handler: () => void): () => void {
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, handler);
  return () => signals.forEach((signal) => Deno.removeSignalListener(signal, handler));
}

const USAGE = `Usage: deno task router [--config <file>]

Runs the edge router: OIP v2 inference, dashboard, metrics and the operator API. Config from
--config or SWITCHYARD_CONFIG (YAML/JSON), each field overridable as
SWITCHYARD_<SECTION>__<FIELD>; every field with its default: deploy/switchyard.example.yaml.
deno task start runs it with its backends.

Options:
      --config <file>  configuration file
  -h, --help           show this help and exit`;

/** Runs the router until SIGINT/SIGTERM; returns the process exit code. */
export async function main(args: readonly string[]): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let config: Config;
  try {
    config = await loadConfig(args, Deno.env.toObject());
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return 1;
  }
  // stdout, rotating files under log.dir, Loki when loki.url is set.
  const logs = createServiceLogger(config, { service: "router" });
  let router;
  try {
    router = await startRouter(config, { logger: logs.logger, logShipping: logs.stats });
  } catch (error) {
    await logs.close();
    if (error instanceof ConfigError || error instanceof Deno.errors.AddrInUse) {
      console.error((error as Error).message);
      return 1;
    }
    throw error;
  }
  const removeSignals = onSignals(() => void router.close());
  await router.finished;
  await router.close();
  await logs.close();
  removeSignals();
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
