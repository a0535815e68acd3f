/**
 * @module How a CLI finds the router: `--url` when given, else the same configuration
 * `deno task start` reads — `--config <file>` or `SWITCHYARD_CONFIG`, then
 * `SWITCHYARD_*__*` overrides such as `SWITCHYARD_ROUTER__PORT` and `router.tls` — with a
 * fetch that trusts the configured certificate. When the router does not answer, the
 * message says which URL was tried, where it came from, and how to pass another.
 */
import type { Config } from "../../shared/config.ts";
import { loadConfig } from "../../shared/config_file.ts";
import { routerTrust, routerUrl } from "./router_address.ts";
import { createTrustedFetch, type TrustedFetch } from "./trusted_fetch.ts";

/** The router a CLI talks to. */
export interface RouterTarget {
  /** Base URL without a trailing slash. */
  url: string;
  /** Where the URL came from, e.g. `SWITCHYARD_ROUTER__PORT` or `config file "x.yaml"`. */
  from: string;
  /** Fetch trusting `router.tls.ca` / `router.tls.cert` for HTTPS. */
  fetch: TrustedFetch;
  /** The resolved configuration (other fields a CLI may need, e.g. `model.dir`). */
  config: Config;
}

/** The CLI options every router client shares, for {@linkcode CliSpec} option lists. */
export const ROUTER_OPTIONS = {
  url: {
    type: "string",
    value: "<url>",
    description: "router base URL (default: from the config, as deno task start: " +
      "http://localhost:8080)",
  },
  config: {
    type: "string",
    value: "<file>",
    description: "config file the pool runs with (or SWITCHYARD_CONFIG; " +
      "SWITCHYARD_ROUTER__PORT etc. apply too)",
  },
} as const;

/** Resolves the router from `--url`/`--config` values and the environment. */
export async function routerTarget(
  values: { url?: string | undefined; config?: string | undefined },
  env: Record<string, string>,
): Promise<RouterTarget> {
  const configPath = values.config ?? env["SWITCHYARD_CONFIG"];
  const config = await loadConfig(values.config ? ["--config", values.config] : [], env);
  const fetch = createTrustedFetch({ ca: await routerTrust(config) });
  if (values.url !== undefined) {
    return { url: values.url.replace(/\/+$/, ""), from: "--url", fetch, config };
  }
  const overrides = Object.keys(env).filter((name) =>
    /^SWITCHYARD_ROUTER__(HOST|PORT|TLS)/i.test(name)
  );
  const sources = [
    ...(configPath ? [`config file "${configPath}"`] : []),
    ...overrides,
  ];
  return {
    url: routerUrl(config),
    from: sources.length ? sources.join(" + ") : "the default config",
    fetch,
    config,
  };
}

/** "Cannot <action>: the router at <url> (from …) <problem>. <how to pass another>". */
export function routerProblem(target: RouterTarget, action: string, problem: string): string {
  return `Cannot ${action}: the router at ${target.url} (from ${target.from}) ${problem}. ` +
    `Pass its URL with --url, or the config it runs with (--config <file>, SWITCHYARD_CONFIG, ` +
    `SWITCHYARD_ROUTER__PORT=<port>)`;
}

/**
 * GETs `path` from the router and parses JSON; throws an Error whose message is a
 * {@linkcode routerProblem} for unreachable routers and non-2xx answers.
 */
export async function getJson<T>(target: RouterTarget, path: string, action: string): Promise<T> {
  let response: Response;
  try {
    response = await target.fetch(`${target.url}${path}`);
  } catch (error) {
    throw new Error(routerProblem(target, action, `is unreachable (${(error as Error).message})`));
  }
  const text = await response.text();
  if (!response.ok) {
    let detail = text.slice(0, 300);
    try {
      detail = JSON.parse(text).error ?? detail;
    } catch { /* not JSON */ }
    throw new Error(routerProblem(target, action, `answered ${response.status}: ${detail}`));
  }
  return JSON.parse(text) as T;
}

/** {@linkcode routerTarget} for a CLI's `main`: reports a config problem and returns undefined. */
export async function routerTargetOrReport(
  values: { url?: string | undefined; config?: string | undefined },
  env: Record<string, string>,
  report: (line: string) => void,
): Promise<RouterTarget | undefined> {
  try {
    return await routerTarget(values, env);
  } catch (error) {
    report((error as Error).message); // a ConfigError or an unreadable certificate
    return undefined;
  }
}
