// deno-lint-ignore-file no-console
/**
 * @module `deno task logs '<LogQL>' [--since 1h] [--limit N] [--url URL]`: runs a log
 * query through the router's `GET /api/logs` and prints the matching lines, oldest first
 * (newest last), one per line:
 *
 * ```
 * 2024-05-01T10:00:03.000Z {level="warn", service="router"} {"ts":…,"msg":"request",…}
 * ```
 *
 * The prefix shows the stream labels (`service`, `level` and, on backend lines,
 * `backend`); `--all-labels` shows every label, including those `| json` extracted
 * (on router request lines `backend` is then the entry backend). The admin token comes from
 * `SWITCHYARD_AUTH__ADMIN_TOKEN`, else from the file `data/admin_token` that
 * `deno task start` writes (override with `--token-file`). The token is never printed.
 *
 * A metric query (`rate(…)`, `sum by (…) (count_over_time(…))`, `quantile_over_time(…
 * | unwrap ms …)`) prints a table: one row per `--step`, one column per series.
 *
 * Other options: `--start`, `--end` (RFC3339 or unix time), `--forward` (the oldest
 * `limit` lines instead of the newest); the router is found like `deno task start` finds
 * it (`--url`, `--config`, `SWITCHYARD_ROUTER__PORT`, `router.tls`). Exit code 1 on any
 * error, with the API's message; 2 on a bad command line.
 */
import { labelsKey, type StreamsResponse } from "../router/operate/logs/streams_result.ts";
import type { MatrixResponse } from "../router/operate/logs/matrix_result.ts";
import { helpText, parseCliArgs } from "./cli/cli_args.ts";
import { ROUTER_OPTIONS, routerProblem, routerTargetOrReport } from "./client/router_target.ts";
import { ADMIN_TOKEN_FILE, readAdminToken } from "./token_files.ts";

const STREAM_LABELS = ["service", "backend", "level"];

/** Options of {@linkcode formatEntries}. */
export interface FormatOptions {
  /** Print every label, not only the stream labels. */
  allLabels?: boolean;
}

/** The lines to print for a `query_range` body: oldest first, `<time> {labels} <line>`. */
export function formatEntries(response: StreamsResponse, options: FormatOptions = {}): string[] {
  const entries = response.data.result.flatMap((stream) => {
    const labels = options.allLabels ? stream.stream : streamLabels(stream.stream);
    const prefix = labelsKey(labels);
    return stream.values.map(([ns, line]) => ({
      ns: BigInt(ns),
      text: `${isoTime(BigInt(ns))} ${prefix} ${line}`,
    }));
  });
  entries.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
  return entries.map((entry) => entry.text);
}

/** `service`, `level` and, on a backend's lines, `backend`: the labels a stream has in Loki. */
function streamLabels(labels: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of STREAM_LABELS) {
    const value = labels[name];
    if (value === undefined || (name === "backend" && labels["service"] !== "backend")) continue;
    out[name] = value;
  }
  return out;
}

/**
 * A metric query's matrix as a table: one row per step, one column per series (named by
 * its labels), `-` where a series has no point at that step.
 *
 * ```
 * time                      {service="backend"}  {service="router"}
 * 2024-05-01T10:00:03.000Z  2                    4
 * ```
 */
export function formatMatrix(response: MatrixResponse): string[] {
  const series = response.data.result;
  if (series.length === 0) return ["(no series: nothing matched in the range)"];
  const times = [...new Set(series.flatMap((s) => s.values.map(([t]) => t)))].sort((a, b) => a - b);
  const header = ["time", ...series.map((s) => labelsKey(s.metric))];
  const rows = times.map((t) => [
    new Date(Math.round(t * 1000)).toISOString(),
    ...series.map((s) => s.values.find(([at]) => at === t)?.[1] ?? "-"),
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((row) => row[i]!.length)));
  return [header, ...rows].map((row) =>
    row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")
  );
}

function isoTime(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

/** The command line of `deno task logs`. */
export const LOGS_CLI = {
  name: "deno task logs",
  positionals: "'<LogQL>'",
  summary:
    "Runs a LogQL query through the router's GET /api/logs (local log files, or Loki when\n" +
    "loki.url is set) and prints the matching lines, oldest first. Needs the admin token:\n" +
    "SWITCHYARD_AUTH__ADMIN_TOKEN, else the file deno task start writes.",
  options: {
    since: { type: "string", default: "1h", value: "<duration>", description: "how far back" },
    limit: { type: "string", default: "100", value: "<n>", description: "most lines to print" },
    start: { type: "string", value: "<time>", description: "range start (RFC3339 or unix time)" },
    end: { type: "string", value: "<time>", description: "range end (RFC3339 or unix time)" },
    forward: { type: "boolean", description: "the oldest --limit lines instead of the newest" },
    step: {
      type: "string",
      value: "<duration>",
      description: "metric queries: time between points (default: range / 250, at least 1s)",
    },
    "all-labels": { type: "boolean", description: "show every label, not only the stream labels" },
    "token-file": {
      type: "string",
      default: ADMIN_TOKEN_FILE,
      value: "<path>",
      description: "admin token file",
    },
    ...ROUTER_OPTIONS,
  },
  epilog: [
    `Example: deno task logs '{service="router"} | json | status >= 500'`,
    `Metric:  deno task logs --since 10m --step 1m 'sum by (request_type) (rate({service="router"} | json | msg="request" [1m]))'`,
  ],
} as const;

/** Runs the CLI; returns the exit code. */
export async function main(args: string[], env: Record<string, string>): Promise<number> {
  const parsed = parseCliArgs(LOGS_CLI, args);
  if (parsed.kind === "exit") {
    (parsed.code === 0 ? console.log : console.error)(parsed.text);
    return parsed.code;
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    console.error(`${helpText(LOGS_CLI)}\n\nCannot query logs: give exactly one LogQL query`);
    return 2;
  }
  const target = await routerTargetOrReport(values, env, console.error);
  if (target === undefined) return 1;
  const token = await readAdminToken(env, values["token-file"]);
  if (token === undefined) {
    console.error(
      `Cannot query logs: no admin token: set SWITCHYARD_AUTH__ADMIN_TOKEN or start the pool with ` +
        `"deno task start" (it writes ${values["token-file"]})`,
    );
    return 1;
  }
  const params = new URLSearchParams({
    query: positionals[0]!,
    since: values.since,
    limit: values.limit,
    direction: values.forward ? "forward" : "backward",
  });
  if (values.start) params.set("start", values.start);
  if (values.end) params.set("end", values.end);
  if (values.step) params.set("step", values.step);
  let response: Response;
  try {
    response = await target.fetch(`${target.url}/api/logs?${params}`, {
      headers: { authorization: `Bearer ${token}` },
    });
  } catch (error) {
    console.error(
      routerProblem(target, "query logs", `is unreachable (${(error as Error).message})`),
    );
    return 1;
  } finally {
    target.fetch.close();
  }
  const body = await response.json().catch(() => null);
  if (!response.ok || body === null) {
    console.error(
      body?.error ?? routerProblem(target, "query logs", `answered ${response.status}`),
    );
    return 1;
  }
  for (const warning of (body as StreamsResponse).warnings ?? []) {
    console.error(`warning: ${warning}`);
  }
  const lines = body?.data?.resultType === "matrix"
    ? formatMatrix(body as MatrixResponse)
    : formatEntries(body as StreamsResponse, { allLabels: values["all-labels"] });
  for (const line of lines) console.log(line);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args, Deno.env.toObject()));
