/**
 * @module `deno task bench:fuzz [--quick]`: hostile input against the real stack — a
 * router and two backends on loopback — as issue 12 targets it: ≥ 10,000 fuzzed bodies
 * (malformed JSON, nesting to 10⁶, wrong types, huge shapes, FP32 overflow, truncated
 * binary, wrong `Inference-Header-Content-Length`, mid-body disconnects, slow bodies; 80 %
 * through the router, 20 % straight to a backend) interleaved with a paced stream of valid
 * requests, then 1,000 slow-body connections at once. Tallies answers by status, compares
 * the valid requests' p99 with an idle run's, checks no process exited, and writes
 * `docs/results/fuzz.json` and `fuzz.md` (with the command).
 */
import { parseCli } from "../../cli/cli_args.ts";
import { generateModel } from "../../model/generate.ts";
import { createRandom, type Random } from "../../model/prng.ts";
import { freePort, type PoolProcess, startProcess } from "../../pool/processes.ts";
import { readUntil, readUntilClosed, sendPartial } from "../../net/raw_http.ts";
import { startBenchBackend } from "../baseline/serving.ts";
import { type FuzzCase, fuzzCase, type FuzzKind, validCase } from "./bodies.ts";
import { quantile, round } from "../stats.ts";

const { values } = parseCli({
  name: "deno task bench:fuzz",
  summary:
    "Fuzzed and slow requests against a router and two backends on loopback, valid requests\ninterleaved: answers by status (target: none ≥ 500), valid p99 vs idle, process exits, and\n1,000 slow-body connections answered within the read timeout.",
  options: {
    bodies: { type: "string", default: "10000", value: "<n>", description: "fuzzed bodies" },
    slow: {
      type: "string",
      default: "1000",
      value: "<n>",
      description: "slow connections at once",
    },
    concurrency: { type: "string", default: "8", value: "<n>", description: "fuzzing clients" },
    "valid-rate": {
      type: "string",
      default: "20",
      value: "<per s>",
      description: "valid requests per second during the fuzz",
    },
    "body-timeout": {
      type: "string",
      default: "2s",
      value: "<duration>",
      description: "limits.body_timeout of the stack",
    },
    seed: {
      type: "string",
      default: "12",
      value: "<n>",
      description: "seed of the case generator",
    },
    quick: { type: "boolean", description: "a short run: 1,000 bodies, 100 slow connections" },
    out: {
      type: "string",
      default: "docs/results/fuzz",
      value: "<path>",
      description: "writes <path>.json and <path>.md",
    },
  },
  epilog: ["Run it alone: flock -o /tmp/switchyard-heavy.lock deno task bench:fuzz"],
});

const quick = values.quick === true;
const BODIES = quick ? 1000 : Number(values.bodies);
const SLOW = quick ? 100 : Number(values.slow);
const SLOW_HEADERS = quick ? 20 : 100;
const CONCURRENCY = Number(values.concurrency);
const VALID_RATE = Number(values["valid-rate"]);
const BODY_TIMEOUT = values["body-timeout"];
const BODY_TIMEOUT_MS = Number(BODY_TIMEOUT.replace(/s$/, "")) * 1000;
const IDLE_VALID = quick ? 100 : 300;
const MODEL = { name: "fuzz-moe", dModel: 64, dFf: 128, layers: 2, experts: 8, topK: 2 };
const MAX_TOKENS = 64;
const TOKEN = "fuzz-internal-token-0123456789";

// Step 1: the stack — two backends and a router, real processes on loopback.
const modelDir = await Deno.makeTempDir({ prefix: "switchyard-fuzz-model-" });
const logDir = await Deno.makeTempDir({ prefix: "switchyard-fuzz-logs-" });
await generateModel(modelDir, { ...MODEL, groups: 2, topkGroup: 1, seed: 3 });
const common = {
  SWITCHYARD_MODEL__DIR: modelDir,
  SWITCHYARD_AUTH__INTERNAL_TOKEN: TOKEN,
  SWITCHYARD_LOG__LEVEL: "warn",
  SWITCHYARD_LOG__REQUESTS: "false",
  SWITCHYARD_LOG__DIR: logDir,
  SWITCHYARD_STATE__KV: ":memory:",
  SWITCHYARD_LIMITS__MAX_TOKENS: String(MAX_TOKENS),
  SWITCHYARD_LIMITS__BODY_TIMEOUT: BODY_TIMEOUT,
};
const backends: PoolProcess[] = await Promise.all(
  [1, 2].map((i) => startBenchBackend(common, TOKEN, { SWITCHYARD_BACKEND__ID: `backend-${i}` })),
);
const routerPort = freePort();
const router = await startProcess("router/main.ts", {
  url: `http://127.0.0.1:${routerPort}`,
  env: {
    ...common,
    SWITCHYARD_ROUTER__HOST: "127.0.0.1",
    SWITCHYARD_ROUTER__PORT: String(routerPort),
    SWITCHYARD_ROUTER__BACKENDS: JSON.stringify(backends.map((b) => b.url)),
  },
});
const processes = [router, ...backends];
const exits: string[] = [];
for (const [i, p] of processes.entries()) {
  void p.child.status.then((s) =>
    exits.push(`${i === 0 ? "router" : `backend-${i}`} exited ${s.code}`)
  );
}

const infer = (base: string) => `${base}/v2/models/${MODEL.name}/infer`;
const model = { dModel: MODEL.dModel, maxTokens: MAX_TOKENS };

/** Status of one answer, or what happened instead (`closed`, `timeout`, `error:<name>`). */
async function send(base: string, c: FuzzCase, auth: boolean): Promise<string> {
  const headers: Record<string, string> = {
    ...c.headers,
    ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}),
  };
  if (c.kind === "disconnect" || c.kind === "slow_body") {
    const conn = await sendPartial({
      url: infer(base),
      headers,
      contentLength: c.body.byteLength,
      sent: new TextDecoder().decode(c.body.subarray(0, c.sendBytes)),
    });
    if (c.kind === "disconnect") {
      await new Promise((r) => setTimeout(r, 20));
      conn.close();
      return "hung up";
    }
    const text = await readUntil(conn, /"code":"[a-z_]+"\}/);
    return text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? "closed";
  }
  try {
    const response = await fetch(infer(base), {
      method: "POST",
      body: c.body,
      headers,
      signal: AbortSignal.timeout(60_000),
    });
    await response.arrayBuffer();
    return String(response.status);
  } catch (error) {
    return `error:${(error as Error).name}`;
  }
}

async function valid(random: Random): Promise<{ status: number; ms: number }> {
  const c = validCase(random, model);
  const started = performance.now();
  const response = await fetch(infer(router.url), {
    method: "POST",
    body: c.body,
    headers: c.headers,
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

// Step 2: idle — valid requests alone, one at a time.
const random = createRandom(Number(values.seed));
for (let i = 0; i < 20; i++) await valid(random); // warm-up
const idle: number[] = [];
for (let i = 0; i < IDLE_VALID; i++) idle.push((await valid(random)).ms);

// Step 3: the fuzz, with a paced stream of valid requests alongside.
const WEIGHTS: [FuzzKind, number][] = [
  ["malformed_json", 16],
  ["deep_nesting", 8],
  ["wrong_types", 16],
  ["huge_shapes", 14],
  ["overflow_values", 14],
  ["truncated_binary", 12],
  ["wrong_header_length", 12],
  ["disconnect", 6],
  ["slow_body", 2],
];
const totalWeight = WEIGHTS.reduce((s, [, w]) => s + w, 0);
function pickKind(r: Random): FuzzKind {
  let x = r() * totalWeight;
  for (const [kind, w] of WEIGHTS) if ((x -= w) < 0) return kind;
  return WEIGHTS[0]![0];
}
const tally = new Map<string, Map<string, number>>();
const count = (kind: string, outcome: string) => {
  const row = tally.get(kind) ?? new Map<string, number>();
  row.set(outcome, (row.get(outcome) ?? 0) + 1);
  tally.set(kind, row);
};
let next = 0;
let fuzzing = true;
const fuzzStarted = performance.now();
const workers = Array.from({ length: CONCURRENCY }, async (_, w) => {
  const r = createRandom(Number(values.seed) * 1000 + w);
  while (next < BODIES) {
    next++;
    const kind = pickKind(r);
    const toBackend = r() < 0.2;
    const base = toBackend ? backends[Math.floor(r() * backends.length)]!.url : router.url;
    const outcome = await send(base, fuzzCase(r, kind, model), toBackend);
    count(kind, outcome);
    count(toBackend ? "(all, straight to a backend)" : "(all, through the router)", outcome);
  }
});
const during: { status: number; ms: number }[] = [];
const validStream = (async () => {
  const r = createRandom(Number(values.seed) + 7);
  while (fuzzing) {
    const started = performance.now();
    during.push(await valid(r));
    const wait = 1000 / VALID_RATE - (performance.now() - started);
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
  }
})();
await Promise.all(workers);
fuzzing = false;
await validStream;
const fuzzSeconds = (performance.now() - fuzzStarted) / 1000;

// Step 4: slow connections — all at once, each sending part of its body and then nothing.
async function slowConnection(
  partialHeaders: boolean,
): Promise<{ status: string; ms: number; closed: boolean }> {
  const started = performance.now();
  const url = new URL(infer(router.url));
  if (partialHeaders) {
    const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
    await conn.write(
      new TextEncoder().encode(`POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\n`),
    );
    const answer = await readUntilClosed(conn, BODY_TIMEOUT_MS + 5000);
    return {
      status: answer.text.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? "none",
      ms: performance.now() - started,
      closed: answer.closed,
    };
  }
  const conn = await sendPartial({
    url: infer(router.url),
    contentLength: 10_000,
    sent: '{"inputs":[',
  });
  // The answer's time is when its JSON ends; then up to 1 s more to see the server close.
  const answer = await readUntil(conn, /"code":"[a-z_]+"\}/, false);
  const ms = performance.now() - started;
  const rest = await readUntilClosed(conn, 1000);
  return { status: answer.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? "none", ms, closed: rest.closed };
}
const slowValid: { status: number; ms: number }[] = [];
let slowing = true;
const slowValidStream = (async () => {
  const r = createRandom(99);
  while (slowing) {
    slowValid.push(await valid(r));
    await new Promise((res) => setTimeout(res, 1000 / VALID_RATE));
  }
})();
const slowBodies = await Promise.all(Array.from({ length: SLOW }, () => slowConnection(false)));
const slowHeaders = await Promise.all(
  Array.from({ length: SLOW_HEADERS }, () => slowConnection(true)),
);
slowing = false;
await slowValidStream;

// Step 5: what the processes say.
async function faults(base: string, auth: boolean): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`, {
    headers: auth ? { authorization: `Bearer ${TOKEN}` } : {},
  })).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^switchyard_input_faults_total\{kind="([a-z_]+)"\} (\d+)/gm)) {
    out[m[1]!] = Number(m[2]);
  }
  return out;
}
const inputFaults = {
  router: await faults(router.url, false),
  backends: await Promise.all(backends.map((b) => faults(b.url, true))),
};
// Exits during the run only: the kills below are ours.
const exited = [...exits];
await Promise.all(processes.map((p) => p.kill()));
let errorLines = 0;
for await (const entry of Deno.readDir(logDir)) {
  const text = await Deno.readTextFile(`${logDir}/${entry.name}`);
  errorLines += text.split("\n").filter((l) => l.includes('"level":"error"')).length;
}
await Deno.remove(logDir, { recursive: true });
await Deno.remove(modelDir, { recursive: true });

// Step 6: the report.
const byStatus = new Map<string, number>();
for (const [kind, row] of tally) {
  if (kind.startsWith("(")) continue;
  for (const [status, n] of row) byStatus.set(status, (byStatus.get(status) ?? 0) + n);
}
const fivexx = [...byStatus].filter(([s]) => /^5\d\d$/.test(s)).reduce((n, [, c]) => n + c, 0);
const p99 = (xs: number[]) => round(quantile(xs, 0.99), 1);
const p50 = (xs: number[]) => round(quantile(xs, 0.5), 1);
const duringOk = during.filter((v) => v.status === 200).length;
const slowValidOk = slowValid.filter((v) => v.status === 200).length;
const slow408 = slowBodies.filter((s) => s.status === "408");
const slowClosed = slowBodies.filter((s) => s.closed).length;
const result = {
  command: `deno task bench:fuzz${quick ? " --quick" : ""}`,
  at: new Date().toISOString(),
  setup: {
    model: MODEL,
    backends: 2,
    bodies: BODIES,
    concurrency: CONCURRENCY,
    valid_rate_per_s: VALID_RATE,
    body_timeout: BODY_TIMEOUT,
    seed: Number(values.seed),
    machine:
      `${navigator.hardwareConcurrency} CPU cores shared by the load generator, router and backends`,
  },
  fuzz: {
    seconds: round(fuzzSeconds, 1),
    by_status: Object.fromEntries([...byStatus].sort()),
    by_kind: Object.fromEntries(
      [...tally].map(([k, row]) => [k, Object.fromEntries([...row].sort())]),
    ),
    answers_5xx: fivexx,
  },
  valid: {
    idle: { n: idle.length, p50_ms: p50(idle), p99_ms: p99(idle) },
    during_fuzz: {
      n: during.length,
      ok: duringOk,
      p50_ms: p50(during.map((v) => v.ms)),
      p99_ms: p99(during.map((v) => v.ms)),
    },
    during_slow: {
      n: slowValid.length,
      ok: slowValidOk,
      by_status: Object.fromEntries(
        [...slowValid.reduce(
          (m, v) => m.set(String(v.status), (m.get(String(v.status)) ?? 0) + 1),
          new Map<string, number>(),
        )].sort(),
      ),
      p50_ms: p50(slowValid.map((v) => v.ms)),
      p99_ms: p99(slowValid.map((v) => v.ms)),
    },
    p99_ratio_fuzz_vs_idle: round(
      quantile(during.map((v) => v.ms), 0.99) / quantile(idle, 0.99),
      2,
    ),
  },
  slow_bodies: {
    connections: SLOW,
    by_status: Object.fromEntries(
      [...slowBodies.reduce(
        (m, x) => m.set(x.status, (m.get(x.status) ?? 0) + 1),
        new Map<string, number>(),
      )].sort(),
    ),
    answered_408: slow408.length,
    answer_ms: {
      p50: p50(slow408.map((s) => s.ms)),
      p99: p99(slow408.map((s) => s.ms)),
      max: round(Math.max(0, ...slow408.map((s) => s.ms)), 1),
    },
    closed_by_server_within_timeout_plus_5s: slowClosed,
  },
  slow_headers: {
    connections: SLOW_HEADERS,
    answered: slowHeaders.filter((s) => s.status !== "none").length,
    closed_by_server_within_timeout_plus_5s: slowHeaders.filter((s) => s.closed).length,
  },
  input_faults_metric: inputFaults,
  process_exits: exited,
  error_log_lines: errorLines,
};
await Deno.writeTextFile(`${values.out}.json`, JSON.stringify(result, null, 2) + "\n");

const kinds = [...tally.keys()];
const statuses = [...new Set([...tally.values()].flatMap((row) => [...row.keys()]))].sort();
const md = [
  "# Fuzz: hostile input against a router and two backends",
  "",
  `Command: \`flock -o /tmp/switchyard-heavy.lock ${result.command}\` (raw numbers: \`${values.out}.json\`)`,
  "",
  `- ${result.at}; model ${MODEL.name} (${MODEL.layers} layers × ${MODEL.experts} experts, d_model ${MODEL.dModel}, onnxruntime CPU); ${result.setup.machine}`,
  `- ${BODIES} fuzzed bodies from ${CONCURRENCY} clients (80 % through the router, 20 % straight to a backend), seed ${values.seed}; valid 1–4-row requests through the router paced at ${VALID_RATE}/s alongside; \`limits.body_timeout\` ${BODY_TIMEOUT}`,
  "- `hung up`: the client closed mid-body on purpose (no answer to read); `slow_body`: part of the body, then nothing",
  "",
  "| measure | value | target |",
  "| --- | ---: | --- |",
  `| fuzzed bodies answered ≥ 500 | ${fivexx} | 0 |`,
  `| process exits (router, backends) | ${exited.length}${
    exited.length ? ` (${exited.join("; ")})` : ""
  } | 0 |`,
  `| error log lines (all processes) | ${errorLines} | 0 |`,
  `| valid requests during the fuzz answered 200 | ${duringOk} / ${during.length} | all |`,
  `| valid p99: idle → during the fuzz | ${result.valid.idle.p99_ms} ms → ${result.valid.during_fuzz.p99_ms} ms (×${result.valid.p99_ratio_fuzz_vs_idle}) | ≤ ×5 |`,
  `| valid p50: idle → during the fuzz | ${result.valid.idle.p50_ms} ms → ${result.valid.during_fuzz.p50_ms} ms | — |`,
  `| slow-body connections answered 408 | ${slow408.length} / ${SLOW} (p99 ${result.slow_bodies.answer_ms.p99} ms, max ${result.slow_bodies.answer_ms.max} ms after connecting) | all, within the timeout |`,
  `| slow-body connections by status | ${
    JSON.stringify(result.slow_bodies.by_status)
  } | 408, or 429 beyond max_body_readers |`,
  `| … of them closed by the server | ${slowClosed} / ${SLOW} | all (see below) |`,
  `| valid requests during the slow connections answered 200 | ${slowValidOk} / ${slowValid.length} (p99 ${result.valid.during_slow.p99_ms} ms; by status ${
    JSON.stringify(result.valid.during_slow.by_status)
  }) | all |`,
  `| slow-header connections (headers never finished) closed by the server | ${result.slow_headers.closed_by_server_within_timeout_plus_5s} / ${SLOW_HEADERS} | — (Deno.serve has no header timeout) |`,
  "",
  "Answers by fault family (status code or outcome):",
  "",
  `| family | ${statuses.join(" | ")} |`,
  `| --- | ${statuses.map(() => "---:").join(" | ")} |`,
  ...kinds.map((k) => `| ${k} | ${statuses.map((s) => tally.get(k)!.get(s) ?? 0).join(" | ")} |`),
  "",
  `\`switchyard_input_faults_total\` afterwards: router ${
    JSON.stringify(inputFaults.router)
  }, backends ${JSON.stringify(inputFaults.backends)}.`,
  "",
  "Slow connections: a slow body holds one of the router's `router.admission.max_body_readers` slots,",
  "never an in-flight slot (`max_in_flight` is taken once a body is whole), so valid requests keep",
  "getting through. It is answered 408 at `limits.body_timeout`, or sooner when, with every reader",
  "slot taken, a newer request takes the slot of a read older than `router.admission.reader_grace`;",
  "with every slot taken by younger reads, a new request gets 429. Deno 2.9 cannot drop a socket",
  "while a read of its request body is pending (a client that sends nothing more), nor time out",
  "unfinished headers; those sockets stay open until the client",
  "hangs up. Closing them is a proxy's job (header/body read timeouts) — see docs/OPERATIONS.md, Hostile input.",
  "",
];
await Deno.writeTextFile(`${values.out}.md`, md.join("\n"));
await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", `${values.out}.md`] }).output();
// deno-lint-ignore no-console
console.log(md.join("\n"));
Deno.exit(0);
