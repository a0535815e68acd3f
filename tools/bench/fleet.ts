/**
 * @module `deno task bench:fleet [--duration 300] [--out docs/results/fleet.md]`: three
 * routers and two backends on loopback sharing one Deno KV file, skewed closed-loop load
 * for `--duration` seconds with the leader drained and SIGKILLed half-way, leader TTL
 * 10 s (the default). Writes a markdown table of what the issue targets: leaders and
 * failover from the lease log, requests sent vs the KV traffic series, notifications per
 * alert transition, plan versions on every backend, and whether routers agree.
 */
import { parseCli } from "../cli/cli_args.ts";
import { generateModel } from "../model/generate.ts";
import { runFleet } from "./fleet_run.ts";

const { values } = parseCli({
  name: "deno task bench:fleet",
  summary:
    "Three routers and two backends sharing one Deno KV file under skewed load, the leader\ndrained and SIGKILLed half-way: leaders, failover, traffic accounting, notifications, plans.",
  options: {
    duration: { type: "string", default: "300", value: "<s>", description: "seconds of load" },
    concurrency: { type: "string", default: "4", value: "<n>", description: "closed-loop clients" },
    out: {
      type: "string",
      default: "docs/results/fleet.md",
      value: "<file>",
      description: "where the markdown report goes",
    },
  },
});
const durationMs = Number(values.duration) * 1000;
const MODEL = { name: "fleet-moe", dModel: 64, dFf: 128, layers: 2, experts: 16, topK: 2 };
const modelDir = await Deno.makeTempDir({ prefix: "switchyard-fleet-model-" });
await generateModel(modelDir, {
  ...MODEL,
  groups: 4,
  topkGroup: 2,
  sharedExperts: 1,
  seed: 5,
  requestTypes: ["chat", "code", "math", "search"],
});
const dir = await Deno.makeTempDir({ prefix: "switchyard-fleet-" });
const started = new Date().toISOString();
const result = await runFleet({
  modelDir,
  model: MODEL.name,
  dModel: MODEL.dModel,
  dir,
  durationMs,
  killAtMs: Math.round(durationMs / 2),
  concurrency: Number(values.concurrency),
  leaderTtl: "10s",
  renewInterval: "3s",
  routerEnv: {
    SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "10s",
    SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.9",
    SWITCHYARD_ALERTS__EXPERT_LOAD_THRESHOLD: "0.02",
  },
});
await Deno.remove(dir, { recursive: true });
await Deno.remove(modelDir, { recursive: true });

const yesNo = (value: boolean) => value ? "yes" : "**no**";
const leaders = [...new Set(result.terms.map((t) => t.holder))];
const lines = [
  "# Multi-router run: 3 routers, 2 backends, leader killed",
  "",
  `Command: \`deno task bench:fleet --duration ${values.duration} --concurrency ${values.concurrency}\``,
  "",
  `- started ${started}; ${values.duration} s of closed-loop load (${values.concurrency} clients), 70 % one`,
  "  request type (hot experts), 1–4 tokens per request, spread round-robin over the live routers;",
  "  a client retries on another router only when a connection fails (the router never saw it)",
  `- model ${MODEL.name}: ${MODEL.layers} layers × ${MODEL.experts} experts, top-${MODEL.topK}, d_model ${MODEL.dModel} (onnxruntime CPU, 1 executor per backend)`,
  "- one Deno KV file (SQLite) shared by the routers; backends found by register discovery",
  "- leader lease TTL 10 s, renewal every 3 s (defaults); balancer every 10 s at threshold 0.9;",
  "  alerts `expert_hot` above 0.02 of a backend's capacity (assumed: chosen so alerts fire)",
  `- the leader (${result.killedLeader}) left the client rotation 3 s before its SIGKILL at ${
    Math.round(durationMs / 2 / 1000)
  } s, as a load balancer drains a pod being deleted`,
  "- machine: 2 CPU cores shared by the load generator, 3 routers and 2 backends",
  "",
  "| measure | value | target |",
  "| --- | ---: | --- |",
  `| leader terms (lease log) | ${result.terms.length} (${leaders.join(" → ")}) | — |`,
  `| leader changes | ${result.terms.length - 1} | 1 (the kill) |`,
  `| every term began after the previous lease expired (never two leaders) | ${
    yesNo(result.leasesDisjoint)
  } | yes |`,
  `| failover: kill → new leader's lease | ${
    result.failoverMs === null ? "none" : `${(result.failoverMs / 1000).toFixed(2)} s`
  } | ≤ 10 s |`,
  `| requests sent | ${result.sent} | — |`,
  `| requests answered 200 | ${result.ok} | = sent |`,
  `| failed requests | ${result.failed}${
    result.failed ? ` ${JSON.stringify(result.failures)}` : ""
  } | 0 |`,
  `| connection retries (router not reached) | ${result.retries} | — |`,
  `| requests in the KV traffic series | ${result.recorded} | = sent (±0) |`,
  `| alert transitions notified: firing / resolved | ${result.notifications.fired} / ${result.notifications.resolved} | — |`,
  `| transitions notified twice (two first attempts) | ${result.notifications.duplicates} | 0 |`,
  `| webhook retries (second attempt, same idempotency key) | ${result.notifications.retried} | — |`,
  `| resolves without their firing notification | ${result.notifications.unmatched} | 0 |`,
  `| plan version in KV / on each backend | ${result.plans.current} / ${
    JSON.stringify(result.plans.backends)
  } | equal |`,
  `| every router answers /api/plan alike | ${yesNo(result.viewsAgree.plan)} | yes |`,
  `| every router answers /api/alerts alike | ${yesNo(result.viewsAgree.alerts)} | yes |`,
  "",
  'Lease log (`["leader", "terms"]` in KV):',
  "",
  "| term | holder | since (ms) | previous lease expired (ms) |",
  "| ---: | --- | ---: | ---: |",
  ...result.terms.map((t) =>
    `| ${t.term} | ${t.holder} | ${t.since} | ${t.previousExpiresAt ?? "—"} |`
  ),
  "",
  `Kill at ${result.killAt} ms. Leadership log lines (\`event: "leader"\`): ${
    result.leaderLog.map((l) => `${l.at} ${l.router} ${l.state} (term ${l.term})`).join("; ")
  }.`,
  "",
];
await Deno.writeTextFile(values.out!, lines.join("\n"));
// deno-lint-ignore no-console
console.log(lines.join("\n"));
