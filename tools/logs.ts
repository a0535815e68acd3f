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
 * Other options: `--start`, `--end` (RFC3339 or unix time), `--forward` (the oldest
 * `limit` lines instead of the newest). Exit code 1 on any error, with the API's message.
 */
import { parseArgs } from "node:util";
import { labelsKey, type StreamsResponse } from "../router/logs/streams_result.ts";
import { ADMIN_TOKEN_FILE, readAdminToken } from "./token_files.ts";

const STREAM_LABELS = ["service", "backend", "level"];

const USAGE =
  `Usage: deno task logs '<LogQL>' [--since 1h] [--limit 100] [--url http://127.0.0.1:8080]
       [--start T] [--end T] [--forward] [--all-labels] [--token-file data/admin_token]
Example: deno task logs '{service="router"} | json | status >= 500'`;

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

function isoTime(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

/** Runs the CLI; returns the exit code. */
export async function main(args: string[], env: Record<string, string>): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      since: { type: "string", default: "1h" },
      limit: { type: "string", default: "100" },
      url: { type: "string", default: "http://127.0.0.1:8080" },
      start: { type: "string" },
      end: { type: "string" },
      forward: { type: "boolean", default: false },
      "all-labels": { type: "boolean", default: false },
      "token-file": { type: "string", default: ADMIN_TOKEN_FILE },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help || positionals.length !== 1) {
    (values.help ? console.log : console.error)(USAGE);
    return values.help ? 0 : 1;
  }
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
  const url = `${values.url.replace(/\/+$/, "")}/api/logs?${params}`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  } catch (error) {
    console.error(`Cannot query logs: ${values.url} is unreachable: ${(error as Error).message}`);
    return 1;
  }
  const body = await response.json().catch(() => null);
  if (!response.ok || body === null) {
    console.error(body?.error ?? `Cannot query logs: ${values.url} answered ${response.status}`);
    return 1;
  }
  for (const warning of (body as StreamsResponse).warnings ?? []) {
    console.error(`warning: ${warning}`);
  }
  for (const line of formatEntries(body as StreamsResponse, { allLabels: values["all-labels"] })) {
    console.log(line);
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args, Deno.env.toObject()));
