// deno-lint-ignore-file no-console
/**
 * @module Router entry point: `deno run -A router/main.ts [--config <path>]`.
 *
 * The only file that reads `Deno.env`. Config comes from `--config` or
 * `SWITCHYARD_CONFIG` (YAML or JSON), with `SWITCHYARD_<SECTION>__<FIELD>` overrides.
 */
import { type Config, ConfigError, resolveConfig } from "../shared/config.ts";
import { startRouter } from "./server.ts";

/** The value of `--config <path>` or `--config=<path>`, if given. */
export function configPathFromArgs(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--config") return args[i + 1];
    if (arg.startsWith("--config=")) return arg.slice("--config=".length);
  }
  return undefined;
}

async function loadConfig(args: readonly string[]): Promise<Config> {
  const path = configPathFromArgs(args) ?? Deno.env.get("SWITCHYARD_CONFIG");
  let fileText: string | undefined;
  if (path !== undefined && path !== "") {
    try {
      fileText = await Deno.readTextFile(path);
    } catch (error) {
      throw new ConfigError(`Cannot read config file "${path}": ${(error as Error).message}`);
    }
  }
  return resolveConfig({
    ...(fileText !== undefined ? { fileText } : {}),
    env: Deno.env.toObject(),
  });
}

function onSignals(handler: () => void): () => void {
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];
  for (const signal of signals) Deno.addSignalListener(signal, handler);
  return () => signals.forEach((signal) => Deno.removeSignalListener(signal, handler));
}

/** Runs the router until SIGINT/SIGTERM; returns the process exit code. */
export async function main(args: readonly string[]): Promise<number> {
  let router;
  try {
    router = await startRouter(await loadConfig(args));
  } catch (error) {
    if (error instanceof ConfigError || error instanceof Deno.errors.AddrInUse) {
      console.error((error as Error).message);
      return 1;
    }
    throw error;
  }
  const removeSignals = onSignals(() => void router.close());
  await router.finished;
  await router.close();
  removeSignals();
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
