// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:slow-conns`: does the router close slow connections within its
 * read timeouts (issue 12: "1,000 slow connections closed within the read timeout")? One
 * backend and one router per HTTP front (`router.http_server`: node, deno) on loopback,
 * both with `limits.body_timeout` = `router.header_timeout` = `--timeout`. For each front
 * in turn: `--slow` connections at once that send a head and part of a body and then
 * nothing, then as many that send half a head; each records its answer and when the
 * server closed it (waiting up to timeout + 10 s). Valid requests run alongside
 * (`--valid-rate`). Writes `<out>.json` and `<out>.md` with the command.
 */
import { parseCli } from "../../cli/cli_args.ts";
import { loadDemoTraffic } from "../../model/traffic.ts";
import type { PoolProcess } from "../../pool/processes.ts";
import { BENCH_TOKEN } from "../baseline/bench_model.ts";
import { benchEnv, startBenchBackend, startBenchRouter } from "../baseline/serving.ts";
import { prepareWorkload } from "../workload.ts";
import { quantile, round } from "../stats.ts";
import { slowBody, slowHead, type SlowOutcome } from "./slow_socket.ts";
import { join } from "node:path";

const { values } = parseCli({
  name: "deno task bench:slow-conns",
  summary:
    "Slow connections (half a head, or a head and part of a body, then nothing) against a\nrouter on each HTTP front (node:http, Deno.serve), side by side in one run: how many the\nserver closed, and when, with valid requests alongside. Writes <out>.json and <out>.md.",
  options: {
    slow: {
      type: "string",
      default: "1000",
      value: "<n>",
      description: "slow connections at once",
    },
    timeout: {
      type: "string",
      default: "5",
      value: "<s>",
      description: "limits.body_timeout and router.header_timeout, seconds",
    },
    fronts: {
      type: "string",
      default: "node,deno",
      value: "<list>",
      description: "router.http_server values to compare",
    },
    "valid-rate": {
      type: "string",
      default: "10",
      value: "<req/s>",
      description: "valid requests",
    },
    "model-dir": {
      type: "string",
      default: "models/demo",
      value: "<dir>",
      description: "model directory (the demo model)",
    },
    quick: { type: "boolean", description: "100 slow connections, 2 s timeout (a smoke run)" },
    out: {
      type: "string",
      default: "docs/results/slow_conns",
      value: "<path>",
      description: "writes <path>.json and <path>.md",
    },
  },
  epilog: ["Run it alone: flock -o /tmp/switchyard-heavy.lock deno task bench:slow-conns"],
});
const quick = values.quick === true;
const SLOW = quick ? 100 : Number(values.slow);
const TIMEOUT_S = quick ? 2 : Number(values.timeout);
const LIMIT_MS = TIMEOUT_S * 1000 + 10_000;
const VALID_RATE = Number(values["valid-rate"]);
const fronts = String(values.fronts).split(",").map((f) => f.trim());
for (const front of fronts) {
  if (front !== "node" && front !== "deno") throw new Error(`--fronts: unknown "${front}"`);
}
const modelDir = String(values["model-dir"]);
const command = ["deno task bench:slow-conns", ...Deno.args].join(" ");
const log = (line: string) => console.log(`[slow-conns] ${line}`);

const manifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
const requests = prepareWorkload({
  dModel: manifest.d_model,
  traffic: await loadDemoTraffic(modelDir),
  count: 64,
});
const common = {
  ...benchEnv(modelDir, BENCH_TOKEN),
  SWITCHYARD_LOG__REQUESTS: "false",
  SWITCHYARD_LIMITS__BODY_TIMEOUT: `${TIMEOUT_S}s`,
  SWITCHYARD_ROUTER__HEADER_TIMEOUT: `${TIMEOUT_S}s`,
};

/** Close-time summary of one kind of slow client. */
function summarize(outcomes: SlowOutcome[]) {
  const closed = outcomes.flatMap((o) => o.closedMs === null ? [] : [o.closedMs]);
  const statuses: Record<string, number> = {};
  for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1;
  const within = (ms: number) => closed.filter((c) => c <= ms).length;
  return {
    n: outcomes.length,
    statuses,
    closed_by_server: closed.length,
    closed_within_timeout_plus_1s: within(TIMEOUT_S * 1000 + 1000),
    still_open_at_timeout_plus_10s: outcomes.length - closed.length,
    close_ms: closed.length === 0 ? null : {
      p50: round(quantile(closed, 0.5), 0),
      p99: round(quantile(closed, 0.99), 0),
      max: round(Math.max(...closed), 0),
    },
  };
}

/** Valid requests at `VALID_RATE` until `stop()`; their statuses. */
function validAlongside(url: string) {
  const statuses: Record<string, number> = {};
  let running = true;
  let i = 0;
  const done = (async () => {
    while (running) {
      const request = requests[i++ % requests.length]!;
      let status: string;
      try {
        const response = await fetch(url, {
          method: "POST",
          body: request.body,
          headers: request.headers,
        });
        await response.arrayBuffer();
        status = String(response.status);
      } catch {
        status = "network";
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      await new Promise((resolve) => setTimeout(resolve, 1000 / VALID_RATE));
    }
  })();
  return async () => {
    running = false;
    await done;
    return statuses;
  };
}

const processes: PoolProcess[] = [];
try {
  log("starting a backend and one router per front …");
  const backend = await startBenchBackend(common, BENCH_TOKEN);
  processes.push(backend);
  const routers = [];
  for (const front of fronts) {
    const router = await startBenchRouter(common, backend.url, {
      SWITCHYARD_ROUTER__HTTP_SERVER: front,
    });
    processes.push(router);
    routers.push({ front, url: `${router.url}/v2/models/${manifest.name}/infer` });
  }
  const rows = [];
  for (const { front, url } of routers) {
    // Warm the route before the slow clients arrive.
    await fetch(url, { method: "POST", body: requests[0]!.body, headers: requests[0]!.headers })
      .then((r) => r.arrayBuffer());
    for (const [kind, open] of [["slow body", slowBody], ["slow head", slowHead]] as const) {
      log(`${front}: ${SLOW} × ${kind} …`);
      const stopValid = validAlongside(url);
      const outcomes = await Promise.all(Array.from({ length: SLOW }, () => open(url, LIMIT_MS)));
      const valid = await stopValid();
      const row = { front, kind, ...summarize(outcomes), valid_alongside: valid };
      log(JSON.stringify(row));
      rows.push(row);
    }
  }
  const run = {
    command,
    at: new Date().toISOString(),
    machine:
      `${navigator.hardwareConcurrency} CPU cores shared by this client, the routers and a backend (and other work on this machine)`,
    timeout_s: TIMEOUT_S,
    slow: SLOW,
    rows,
  };
  const out = String(values.out);
  await Deno.writeTextFile(`${out}.json`, JSON.stringify(run, null, 2) + "\n");
  const md = [
    "# Slow connections against each router HTTP front (`bench:slow-conns`)",
    "",
    `Command: \`flock -o /tmp/switchyard-heavy.lock ${command}\` (raw numbers: \`${out}.json\`)`,
    "",
    `- ${run.at}; ${run.machine}; compare rows of this run only`,
    `- one backend (${manifest.name}) and one router per front; both routers with \`limits.body_timeout\` = \`router.header_timeout\` = ${TIMEOUT_S} s, other settings default (\`router.max_connections\` 1024 on node)`,
    `- per front: ${SLOW} connections at once sending a head and part of a 10,000-byte body, then ${SLOW} sending half a head; each waits up to ${
      LIMIT_MS / 1000
    } s for the server to close it; valid requests at ${VALID_RATE}/s alongside`,
    "",
    "| front | slow clients | answers | closed by the server | closed ≤ timeout + 1 s | still open at timeout + 10 s | close ms p50 / p99 / max | valid requests alongside |",
    "| --- | --- | --- | ---: | ---: | ---: | --- | --- |",
    ...rows.map((r) =>
      `| ${r.front} | ${r.n} × ${r.kind} | ${
        Object.entries(r.statuses).map(([s, n]) => `${s}: ${n}`).join(", ")
      } | ${r.closed_by_server} | ${r.closed_within_timeout_plus_1s} | ${r.still_open_at_timeout_plus_10s} | ${
        r.close_ms ? `${r.close_ms.p50} / ${r.close_ms.p99} / ${r.close_ms.max}` : "—"
      } | ${Object.entries(r.valid_alongside).map(([s, n]) => `${s}: ${n}`).join(", ")} |`
    ),
    "",
    '"none": no answer before the close (a slow head is closed without one). A slow body\'s',
    "timer starts when the router reads its body, so its 408 and close come just after the",
    "timeout; a 429 is admission shedding before the body is read (the node front then closes).",
    "",
  ].join("\n");
  await Deno.writeTextFile(`${out}.md`, md);
  log(`wrote ${out}.md`);
} finally {
  await Promise.all(processes.map((p) => p.kill()));
}
