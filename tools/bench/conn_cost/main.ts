// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:conn-cost`: what one client connection costs the router's
 * process in resident memory, on each HTTP front (`Deno.serve`, `node:http`) — the floor
 * under "router RSS at 5× ≤ 2× idle" (issue 12), since an open-loop storm holds as many
 * connections as it has requests outstanding. For each front and state a fresh server
 * (`conn_cost/server.ts`) is warmed up, its RSS read, then `--connections` connections are
 * opened that stay idle (connected, nothing sent), served (one 3,000-byte POST answered,
 * then kept alive) or pending (a 3,000-byte POST each, held unanswered by the server), and
 * its RSS read again once it holds them all. Writes
 * `<out>.json` and `<out>.md` with the command.
 */
import { parseCli } from "../../cli/cli_args.ts";
import { rssMiB } from "../faults_stack.ts";
import { round } from "../stats.ts";

const { values } = parseCli({
  name: "deno task bench:conn-cost",
  summary:
    "Resident memory per client connection on each router HTTP front (Deno.serve, node:http),\nidle and with a request in flight. Writes <out>.json and <out>.md.",
  options: {
    connections: {
      type: "string",
      default: "4000",
      value: "<n>",
      description: "connections per measurement",
    },
    out: {
      type: "string",
      default: "docs/results/conn_cost",
      value: "<path>",
      description: "writes <path>.json and <path>.md",
    },
  },
});
const n = Number(values.connections);
const command = ["deno task bench:conn-cost", ...Deno.args].join(" ");
const log = (line: string) => console.log(`[conn-cost] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const BODY = "x".repeat(3000);
const post = (path: string) =>
  new TextEncoder().encode(
    `POST ${path} HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n` +
      `content-length: ${BODY.length}\r\n\r\n${BODY}`,
  );
const HELD = post("/v2/models/m/infer");
const SERVED = post("/ok");

async function startServer(front: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("./server.ts", import.meta.url).pathname,
      "--front",
      front,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  // The first line on stdout is the port; the rest is drained.
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`Cannot start the ${front} server: it exited`);
    text += chunk.value;
  }
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return { child, port: Number(text.split("\n")[0]) };
}

/** Reads until a whole `ok` answer has arrived (small: one or two reads). */
async function readAnswer(conn: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(1024);
  let text = "";
  while (!text.endsWith("ok")) {
    const n = await conn.read(buffer);
    if (n === null) throw new Error("Cannot measure served connections: the server closed one");
    text += new TextDecoder().decode(buffer.subarray(0, n));
  }
}

/** RSS once it has stopped growing (three equal-ish reads 500 ms apart), within 20 s. */
async function settledRss(pid: number): Promise<number> {
  let last = rssMiB(pid);
  for (let i = 0, still = 0; i < 40 && still < 3; i++) {
    await sleep(500);
    const now = rssMiB(pid);
    still = Math.abs(now - last) < 0.5 ? still + 1 : 0;
    last = now;
  }
  return last;
}

const rows = [];
for (const front of ["deno", "node"]) {
  for (const state of ["idle", "served", "pending"] as const) {
    const { child, port } = await startServer(front);
    const base = `http://127.0.0.1:${port}`;
    try {
      for (let i = 0; i < 200; i++) await (await fetch(`${base}/ok`)).text();
      const before = await settledRss(child.pid);
      const conns: Deno.Conn[] = [];
      for (let i = 0; i < n; i++) {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        if (state === "pending") await conn.write(HELD);
        if (state === "served") {
          await conn.write(SERVED);
          await readAnswer(conn);
        }
        conns.push(conn);
      }
      if (state === "pending") {
        for (let i = 0; i < 120; i++) {
          if (Number(await (await fetch(`${base}/held`)).text()) >= n) break;
          await sleep(500);
        }
      }
      const after = await settledRss(child.pid);
      const row = {
        front: front === "deno" ? "Deno.serve" : "node:http",
        state,
        connections: n,
        rss_before_mib: round(before, 1),
        rss_after_mib: round(after, 1),
        kib_per_connection: round((after - before) * 1024 / n, 1),
        mib_per_8192: round((after - before) * 8192 / n, 1),
      };
      rows.push(row);
      log(JSON.stringify(row));
      for (const conn of conns) conn.close();
    } finally {
      child.kill();
      await child.status;
    }
  }
}

const run = { command, at: new Date().toISOString(), cores: navigator.hardwareConcurrency, rows };
const out = String(values.out);
await Deno.writeTextFile(`${out}.json`, JSON.stringify(run, null, 2) + "\n");
const md = [
  "# Resident memory per client connection, per router HTTP front (`bench:conn-cost`)",
  "",
  `Command: \`${command}\` (raw numbers: \`${out}.json\`)`,
  "",
  `- ${run.at}; a fresh server process per row (the front alone, as \`router/serve/front/\` and \`Deno.serve\` serve the router), warmed up with 200 requests, RSS read once settled before and after ${n} connections`,
  "- idle: connected, nothing sent; served: one 3,000-byte POST answered, then kept alive (a keep-alive client between requests); pending: a 3,000-byte POST sent on each, held unanswered (a request in flight)",
  "- the router's own work per request (Hono, admission, forwarding) comes on top: this is a floor",
  "",
  "| front | connections | RSS before MiB | RSS after MiB | KiB per connection | MiB for 8,192 |",
  "| --- | --- | ---: | ---: | ---: | ---: |",
  ...rows.map((r) =>
    `| ${r.front} | ${r.connections} ${r.state} | ${r.rss_before_mib} | ${r.rss_after_mib} | ${r.kib_per_connection} | ${r.mib_per_8192} |`
  ),
  "",
  "8,192 is the load generator's bound on outstanding requests in `bench:faults` and `bench:router-rss`:",
  "at 5× offered load it holds that many connections open, each between requests or with one in flight.",
  "",
];
await Deno.writeTextFile(`${out}.md`, md.join("\n"));
await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", `${out}.md`] }).output();
console.log(md.join("\n"));
Deno.exit(0);
