/**
 * @module Loading the configuration at process start: `--config <path>` (or
 * `--config=<path>`) or `SWITCHYARD_CONFIG`, then `SWITCHYARD_*__*` env overrides.
 * Entry points call this once; everything past it sees only the resolved `Config`.
 */
import { type Config, ConfigError, resolveConfig } from "./config.ts";

/** The value of `--config <path>` or `--config=<path>`, if given. */
export function configPathFromArgs(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--config") return args[i + 1];
    if (arg.startsWith("--config=")) return arg.slice("--config=".length);
  }
  return undefined;
}

/** Reads and resolves the config; throws {@linkcode ConfigError} naming the file or field. */
export async function loadConfig(
  args: readonly string[],
  env: Record<string, string>,
): Promise<Config> {
  const path = configPathFromArgs(args) ?? env["SWITCHYARD_CONFIG"];
  let fileText: string | undefined;
  if (path !== undefined && path !== "") {
    try {
      fileText = await Deno.readTextFile(path);
    } catch (error) {
      throw new ConfigError(`Cannot read config file "${path}": ${(error as Error).message}`);
    }
  }
  return resolveConfig({ ...(fileText !== undefined ? { fileText } : {}), env });
}
