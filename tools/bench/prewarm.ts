// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:prewarm`: capacity ready before a declared 5× event, compared
 * with the ways others provision it — on real processes in compressed time.
 *
 * The workload (`prewarm_workload.ts`, seeded): a 5× event at 20:00 with its own mix (70 %
 * `code`), the trace's diurnal shape around it, open-loop Poisson requests of `--rows`
 * tokens; the pool (2 backends) sized for `--utilisation` (default 0.8) of its capacity just
 * before the event; history of 2½ days in the traffic store for the forecasters.
 *
 * The backends run on the **simulated executor** (each a dedicated device, as on a GPU
 * pool; this 2-core machine adds no compute per process): gates run on onnxruntime, a
 * layer execution occupies the device for `fixed_ms + per_row_ms · rows`, both MEASURED
 * from onnxruntime here in this run (`calibrateLayerFromOrt`). A backend's cold start is
 * INJECTED (a labelled bench option, `--cold-start`, default 20 real s): the launcher waits
 * that long before spawning a backend asked for, as an image pull would.
 *
 * Time is compressed `--speed`× (control periods, cold start and the lead in simulated
 * time; request latency real). Per run: a fresh stack (`prewarm_stack.ts`), one policy
 * (`prewarm_policies.ts`), the replay of [T − before, T + after). Step 1 (once): measure
 * the device time, one backend's capacity at saturation, the in-flight per backend at the
 * normal utilisation (B1's target) and a real cold start (the launcher starting a backend,
 * ready, its expert set staged) — the lead the job starts with.
 *
 * Measures (`prewarm_report.ts`): goodput under the SLO over the event's first 10 minutes,
 * p99 over its first 5, backend-minutes over T ± `--window`, expert loads on the request
 * path in the first 5 minutes, p99 in the hour before vs no pre-warming; seeds' spread.
 */
import { join } from "node:path";
import { existsSync } from "node:fs";
import { PlanClient } from "../../router/control/balancer/plan_client.ts";
import { placementPort } from "../../router/control/prewarm/create_prewarm.ts";
import { systemClock } from "../../router/runtime/clock.ts";
import { calibrateLayerFromOrt } from "../../gpu-backend/layer/calibrate_layer.ts";
import { MemoryLogger } from "../../shared/logging/memory_logger.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { parseCli } from "../cli/cli_args.ts";
import { generateModel } from "../model/generate.ts";
import { createRandom } from "../model/prng.ts";
import { loadDemoTraffic } from "../model/traffic.ts";
import { computeLimit } from "./compute_limit.ts";
import { resultsHeader } from "./results_header.ts";
import { formatTable, quantile, round } from "./stats.ts";
import {
  createPolicy,
  LABELS,
  POLICIES,
  type PolicyContext,
  type PolicyName,
} from "./prewarm_policies.ts";
import {
  comparisonTable,
  measure,
  type RunMeasures,
  type RunRecord,
  targetsTable,
  timelineRows,
  type TimelineSample,
} from "./prewarm_report.ts";
import { type Stack, startStack, TOKEN } from "./prewarm_stack.ts";
import { Sender } from "./prewarm_sender.ts";
import {
  type EncodedRequest,
  HOUR,
  measureAffinity,
  MINUTE,
  prepareRequests,
  type PrewarmScenario,
  prewarmScenario,
  traceStart,
  writeBuckets,
} from "./prewarm_workload.ts";

const { values } = parseCli({
  name: "deno task bench:prewarm",
  summary: "A declared 5× event with its own mix, replayed in compressed time on real processes\n" +
    "(simulated executor, device time measured from onnxruntime here, an injected backend\n" +
    "cold start): Switchyard's capacity contracts vs B1 reactive (queue depth), B2\n" +
    "forecast-only, B3 T−60 min and an oracle; goodput, p99, backend-minutes, cold starts.",
  options: {
    seeds: { type: "string", default: "1,2,3", value: "<list>", description: "trace seeds" },
    policies: {
      type: "string",
      default: POLICIES.join(","),
      value: "<list>",
      description: "policies to run",
    },
    speed: { type: "string", default: "30", value: "<x>", description: "simulated s per real s" },
    before: { type: "string", default: "90", value: "<min>", description: "replay from T − this" },
    after: { type: "string", default: "90", value: "<min>", description: "replay until T + this" },
    "cold-start": {
      type: "string",
      default: "20",
      value: "<s>",
      description: "INJECTED backend cold start, real seconds before each scaled spawn",
    },
    utilisation: {
      type: "string",
      default: "0.8",
      value: "<u>",
      description: "the 2-backend pool's utilisation just before the event",
    },
    multiplier: { type: "string", default: "5", value: "<x>", description: "the event's size" },
    "event-minutes": { type: "string", default: "60", value: "<min>", description: "its length" },
    rows: { type: "string", default: "128", value: "<n>", description: "tokens per request" },
    threshold: {
      type: "string",
      default: "0.8",
      value: "<u>",
      description: "utilisation sized for",
    },
    hold: { type: "string", default: "10", value: "<min>", description: "scale-down hold" },
    "slo-ms": {
      type: "string",
      value: "<ms>",
      description: "latency SLO (default: 4 × the p50 at the normal utilisation, measured)",
    },
    model: { type: "string", default: "models/demo", value: "<dir>", description: "model" },
    short: {
      type: "boolean",
      default: false,
      description: "a short run: 1 seed, T−25…T+15 min, speed 60, 8 s cold start",
    },
    out: {
      type: "string",
      value: "<file.md>",
      description: "write the results file (full runs only: on a quiet machine)",
    },
  },
});

const short = values.short === true;
const seeds = (short ? "1" : values.seeds).split(",").map(Number);
const speed = Number(short ? "60" : values.speed);
const beforeMin = Number(short ? "25" : values.before);
const afterMin = Number(short ? "15" : values.after);
const coldStartS = Number(short ? "8" : values["cold-start"]);
const utilisation = Number(values.utilisation);
const multiplier = Number(values.multiplier);
const rows = Number(values.rows);
const threshold = Number(values.threshold);
const holdMs = Number(values.hold) * MINUTE;
const policies = values.policies.split(",").map((p) => p.trim()) as PolicyName[];
for (const p of policies) {
  if (!POLICIES.includes(p)) {
    throw new TypeError(`Cannot run bench: --policies: unknown "${p}" (${POLICIES.join(", ")})`);
  }
}
const log = (line: string) => console.log(`  ${line}`);

// The model.
const modelDir = values.model;
if (!existsSync(join(modelDir, "moe.json"))) await generateModel(modelDir, {});
const manifest: ModelManifest = JSON.parse(await Deno.readTextFile(join(modelDir, "moe.json")));
const traffic = (await loadDemoTraffic(modelDir))!;

// Step 1: measured in this run.
console.log("step 1: device time, capacity, cold start (measured here)");
const limit = await computeLimit(modelDir, manifest);
const calibration = await calibrateLayerFromOrt(modelDir, manifest, {});
const backendEnv = {
  SWITCHYARD_MODEL__DIR: modelDir,
  SWITCHYARD_BACKEND__EXECUTOR: "simulated",
  SWITCHYARD_BACKEND__EXECUTORS: "0",
  SWITCHYARD_BACKEND__SIMULATED__FIXED_MS: calibration.fixedMs.toFixed(4),
  SWITCHYARD_BACKEND__SIMULATED__PER_ROW_MS: calibration.perRowMs.toFixed(5),
};
log(
  `device time (measured, onnxruntime CPU, 1 thread): fixed ${
    calibration.fixedMs.toFixed(3)
  } ms + ` +
    `${calibration.perRowMs.toFixed(5)} ms per row; compute limit ${
      Math.round(limit.tokensPerS)
    } tokens/s per core`,
);
const probe = await probeStack();
const baseRps = (utilisation * 2 * probe.capacityPerBackend) / rows;
const eventBackends = Math.ceil(
  (multiplier * baseRps * rows) / (probe.capacityPerBackend * threshold) - 1e-9,
);
const sloMs = values["slo-ms"] !== undefined
  ? Number(values["slo-ms"])
  : Math.round(4 * probe.p50Ms);
log(
  `capacity ${
    round(probe.capacityPerBackend, 1)
  } tokens/s per backend (2 backends at saturation); ` +
    `${round(baseRps, 2)} req/s of ${rows} tokens before the event (utilisation ${utilisation}); ` +
    `the event needs ${eventBackends} backends at ${threshold}; SLO ${sloMs} ms; ` +
    `in flight per backend at ${utilisation}: ${round(probe.inFlightPerBackend, 2)}; ` +
    `cold starts of ${probe.coldStarts.length} backends started at once (injected ${coldStartS} s ` +
    `real + the measured start, + expert set load): ${
      probe.coldStarts.map((c) => round((c.readyMs + c.expertLoadMs) / MINUTE, 1)).join(", ")
    } sim-min`,
);

// Step 2: every policy on every seed.
const records: RunRecord[] = [];
for (const seed of seeds) {
  for (const policy of policies) {
    const started = performance.now();
    const record = await runOnce(policy, seed);
    records.push(record);
    console.log(
      `  ${LABELS[policy]} (seed ${seed}): ${record.sent.length} requests, ` +
        `${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  }
}
await report();
Deno.exit(0);

/** The probe: capacity at saturation, in flight and p50 at the normal load, a cold start. */
async function probeStack() {
  const scenario = prewarmScenario(seeds[0]!, { baseRps: 1, multiplier });
  const stack = await startStack({
    backendEnv,
    initial: 2,
    speed,
    simOrigin: scenario.start - 2 * HOUR,
    injectedColdStartRealMs: coldStartS * 1000,
    blend: {},
    log: () => {},
  });
  try {
    const requests = prepareRequests(traffic, manifest, { rows, seed: 1 });
    const chat = requests["chat"]!;
    // Capacity: closed loop, 16 in flight per backend, 8 s.
    const sat = await closedLoop(stack.router.url, chat, 32, 8_000);
    const capacityPerBackend = (sat.ok * rows) / (sat.seconds * 2);
    // The normal load: open loop at the utilisation, 6 s.
    const rps = (utilisation * 2 * capacityPerBackend) / rows;
    const inFlight: number[] = [];
    const sampler = setInterval(() => {
      inFlight.push(stack.router.pool.views().reduce((s, v) => s + v.inFlight, 0) / 2);
    }, 100);
    const sender = new Sender(stack.router.url, manifest.name);
    await sender.until(performance.now() + 6_000, () => chat, () => rps, () => 0, createRandom(7));
    clearInterval(sampler);
    await sender.drain();
    const ok = sender.sent.filter((s) => s.status === 200).map((s) => s.latencyMs);
    // Cold starts through the launcher, as many at once as the event will ask for:
    // asked → ready (the injected wait plus the real start, in parallel on this host),
    // then their expert sets staged.
    const extra = Math.max(
      1,
      Math.ceil((multiplier * rps * rows) / (capacityPerBackend * threshold) - 1e-9) - 2,
    );
    stack.launcher.setTarget({ target: 2 + extra });
    let ready: ReturnType<typeof stack.launcher.list>["backends"] = [];
    for (let i = 0; i < 1200; i++) {
      ready = stack.launcher.list().backends.filter((b) => b.scaled && b.state === "ready");
      if (ready.length >= extra) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (ready.length < extra) {
      throw new Error("Cannot measure cold starts: backends never became ready");
    }
    for (const b of ready) stack.router.pool.add(b.url, { role: "standby" });
    for (let i = 0; i < 300; i++) {
      const views = stack.router.pool.views();
      if (views.every((v) => v.healthy && typeof v.details?.["backend_id"] === "string")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const members = stack.router.pool.views().map((v) => ({ id: v.name, url: v.url }));
    const placement = placementPort(stack.config, {
      balancer: stack.reactive.balancer,
      plans: stack.reactive.store,
      client: new PlanClient({ fetch, clock: systemClock, internalToken: TOKEN }),
      budgets: () => new Map(),
      clock: stack.clock,
      logger: new MemoryLogger(),
    });
    const uniform = Array.from(
      { length: manifest.layers },
      () => new Array(manifest.experts).fill(1),
    );
    const staged = await placement.stage(placement.propose(uniform, members));
    const stageMs = (url: string) => {
      const id = members.find((m) => m.url === url)?.id;
      return staged.kind === "staged" ? staged.results.find((r) => r.backend === id)?.ms ?? 0 : 0;
    };
    return {
      capacityPerBackend,
      inFlightPerBackend: Math.max(
        0.5,
        inFlight.reduce((a, b) => a + b, 0) / Math.max(1, inFlight.length),
      ),
      p50Ms: quantile(ok, 0.5),
      // Simulated ms: the launcher's clock is the compressed one; stage times are real ms.
      coldStarts: ready.map((b) => ({
        url: b.url,
        readyMs: b.ready_at! - b.requested_at,
        expertLoadMs: stageMs(b.url) * speed,
      })),
    };
  } finally {
    await stack.close();
  }
}

/** `concurrency` requests in flight for `ms` real ms; counts the answers. */
async function closedLoop(
  url: string,
  requests: EncodedRequest[],
  concurrency: number,
  ms: number,
) {
  const end = performance.now() + ms;
  const started = performance.now();
  let ok = 0;
  let i = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      const r = requests[i++ % requests.length]!;
      const response = await fetch(`${url}/v2/models/${manifest.name}/infer`, {
        method: "POST",
        body: r.body,
        headers: r.headers,
      });
      await response.arrayBuffer();
      if (response.ok) ok++;
    }
  }));
  return { ok, seconds: (performance.now() - started) / 1000 };
}

/** One policy on one seed: a fresh stack, the replay, the record. */
async function runOnce(policy: PolicyName, seed: number): Promise<RunRecord> {
  const started = performance.now();
  const scenario = prewarmScenario(seed, {
    baseRps,
    multiplier,
    eventMinutes: Number(values["event-minutes"]),
  });
  const from = scenario.start - (policy === "none" ? Math.min(60, beforeMin) : beforeMin) * MINUTE;
  const to = policy === "none" ? scenario.start : scenario.start + afterMin * MINUTE;
  const blend: Parameters<typeof startStack>[0]["blend"] = {};
  const stack = await startStack({
    backendEnv,
    initial: 2,
    speed,
    simOrigin: from,
    injectedColdStartRealMs: coldStartS * 1000,
    blend,
    log: () => {},
  });
  try {
    const affinity = await measureAffinity(stack.router.url, manifest, traffic);
    await writeBuckets(stack.store, scenario, {
      model: manifest.name,
      rows,
      affinity,
      from: traceStart(scenario),
      to: from,
      affinityFrom: from - 6 * HOUR,
    });
    const ctx: PolicyContext = {
      stack,
      scenario,
      manifest,
      rows,
      capacityPerBackend: probe.capacityPerBackend,
      threshold,
      floor: 2,
      eventBackends,
      coldStarts: probe.coldStarts,
      inFlightTarget: probe.inFlightPerBackend,
      holdMs,
      log,
    };
    const run = createPolicy(policy, ctx);
    if (run.job) blend.current = (model, observed, now) => run.job!.blendLoad(model, observed, now);
    return await replay(stack, scenario, run, { from, to, seed, affinity, started });
  } finally {
    await stack.close();
  }
}

/** The replay of `[from, to)` minute by minute. */
async function replay(
  stack: Stack,
  scenario: PrewarmScenario,
  run: ReturnType<typeof createPolicy>,
  options: {
    from: number;
    to: number;
    seed: number;
    affinity: Record<string, number[][]>;
    started: number;
  },
): Promise<RunRecord> {
  const requests = prepareRequests(traffic, manifest, { rows, seed: options.seed });
  const random = createRandom(options.seed * 7919);
  const timeline: TimelineSample[] = [];
  const window = Math.max(beforeMin, afterMin) * MINUTE;
  let backendMs = 0;
  let lastSample: { at: number; count: number } | null = null;
  const sampleBackends = () => {
    const at = stack.clock.now();
    const count = stack.launcher.list().backends.length;
    if (lastSample !== null) {
      const lo = Math.max(lastSample.at, scenario.start - window);
      const hi = Math.min(at, scenario.start + window);
      if (hi > lo) backendMs += (hi - lo) * lastSample.count;
    }
    lastSample = { at, count };
  };
  const sampler = setInterval(sampleBackends, 200);
  stack.clock.anchor(options.from);
  await run.start();
  const sender = new Sender(stack.router.url, manifest.name);
  let ticking: Promise<void> | null = null;
  let coldAtStart = 0;
  let coldAt5 = 0;
  const tickMs = MINUTE / speed;
  const t0 = performance.now();
  try {
    for (let sim = options.from; sim < options.to; sim += MINUTE) {
      const tickStart = t0 + ((sim - options.from) / MINUTE) * tickMs;
      if (sim > options.from) {
        await writeBuckets(stack.store, scenario, {
          model: manifest.name,
          rows,
          affinity: options.affinity,
          from: sim - MINUTE,
          to: sim,
          affinityFrom: options.from - 6 * HOUR,
        });
      }
      if (sim === scenario.start) coldAtStart = await stack.coldStarts();
      if (sim === scenario.start + 5 * MINUTE) coldAt5 = await stack.coldStarts();
      // Like a cron: a tick still running when the next minute comes is not doubled up, and
      // never holds back the traffic.
      if (ticking === null) ticking = run.tick(sim).finally(() => ticking = null);
      timeline.push(sample(stack, sim));
      const mix = Object.entries(scenario.mixAt(sim));
      // This minute's arrivals (a late tick sends the rest of its minute, then catches up).
      await sender.until(
        tickStart + tickMs,
        () => {
          let u = random();
          const type = mix.find(([, share]) => (u -= share) < 0)?.[0] ?? mix[0]![0];
          return requests[type]!;
        },
        () => scenario.rpsAt(stack.clock.now()),
        () => stack.clock.now(),
        random,
      );
    }
  } finally {
    clearInterval(sampler);
    sampleBackends();
    await ticking;
    await run.stop();
    await sender.drain();
  }
  const lead = run.job?.lead();
  return {
    policy: run.name,
    seed: options.seed,
    sent: sender.sent,
    timeline,
    backendMinutes: backendMs / MINUTE,
    coldStartsFirst5: Math.max(0, coldAt5 - coldAtStart),
    ...(lead
      ? { lead: { leadMs: lead.leadMs, coldStartMs: lead.coldStartMs, source: lead.source } }
      : {}),
    realSeconds: (performance.now() - options.started) / 1000,
  };
}

function sample(stack: Stack, at: number): TimelineSample {
  const list = stack.launcher.list().backends;
  const views = stack.router.pool.views();
  const role = (r: string) => views.filter((v) => (v.role ?? "active") === r).length;
  const load = stack.router.load.snapshot();
  const busy = views.filter((v) =>
    (v.role ?? "active") === "active" &&
    load.backends.some((b) => b.name === v.name && !b.stale && (b.tokensPerS ?? 0) > 0)
  ).length;
  return {
    at,
    requested: list.filter((b) => b.state !== "stopping").length,
    ready: list.filter((b) => b.state === "ready").length,
    active: role("active"),
    standby: role("standby"),
    draining: role("draining"),
    busy,
  };
}

async function report(): Promise<void> {
  const start = prewarmScenario(seeds[0]!, { baseRps, multiplier }).start;
  const by = new Map<PolicyName, RunMeasures[]>();
  for (const r of records) {
    const list = by.get(r.policy) ?? [];
    list.push(measure(r, { start, sloMs, speed }));
    by.set(r.policy, list);
  }
  const table = comparisonTable(policies, by, {
    unit: "backend",
    windowMin: Math.max(beforeMin, afterMin),
  });
  console.log("\n" + table);
  const checkTable = targetsTable(by);
  console.log("\n" + checkTable);
  const firstSeed = records.filter((r) => r.seed === seeds[0]);
  const t = timelineRows(firstSeed.filter((r) => r.policy !== "none"), {
    start,
    from: -Math.min(beforeMin, 60),
    to: afterMin,
    stepMin: short ? 5 : 10,
  });
  const timeline = formatTable(t.header, t.rows);
  console.log(
    `\nbackends requested/ready/active(+standby, +draining)/busy, seed ${seeds[0]}:\n${timeline}`,
  );
  const leads = records.filter((r) => r.lead && r.policy === "switchyard")
    .map((r) =>
      `seed ${r.seed}: lead ${round(r.lead!.leadMs / MINUTE, 1)} sim-min from p95 cold start ${
        r.lead!.coldStartMs === null ? "-" : round(r.lead!.coldStartMs / MINUTE, 1)
      } sim-min (${r.lead!.source})`
    );
  if (leads.length > 0) console.log(`\nSwitchyard's lead: ${leads.join("; ")}`);
  if (values.out !== undefined) await writeResults(table, checkTable, timeline, leads);
}

async function writeResults(table: string, checks: string, timeline: string, leads: string[]) {
  const command = `deno task bench:prewarm ${Deno.args.join(" ")}`.trim();
  const header = await resultsHeader({
    command,
    limit: `${Math.round(limit.tokensPerS)} tokens/s per core (MatMul, onnxruntime CPU)`,
    notes: [
      `device time (measured here, onnxruntime CPU, 1 thread): fixed ${
        calibration.fixedMs.toFixed(3)
      } ms + ${
        calibration.perRowMs.toFixed(5)
      } ms per row; backends on the simulated executor (one dedicated device each)`,
      `cold start INJECTED: ${coldStartS} real s (${
        round((coldStartS * speed) / 60, 1)
      } simulated min) before each scaled spawn, plus the measured start`,
      `speed ${speed}× (control periods in simulated time; latency real); seeds ${
        seeds.join(", ")
      }; SLO ${sloMs} ms`,
      `capacity ${round(probe.capacityPerBackend, 1)} tokens/s per backend (measured); ${
        round(baseRps, 2)
      } req/s of ${rows} tokens before the event; the event needs ${eventBackends} backends`,
    ],
  });
  const text = [
    "# Pre-warming: capacity ready before a declared 5× event (real stack)",
    "",
    ...header,
    "",
    "Mean (min–max over seeds).",
    "",
    "```",
    table,
    "```",
    "",
    "```",
    checks,
    "```",
    "",
    "Backends requested/ready/active(+standby, +draining)/busy:",
    "",
    "```",
    timeline,
    "```",
    "",
    ...leads.map((l) => `- ${l}`),
    "",
  ].join("\n");
  await Deno.writeTextFile(values.out!, text);
  console.log(`wrote ${values.out}`);
}
