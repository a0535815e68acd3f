// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:failover [--scenario leader-kill|split-brain|both] [--out …]`:
 * the control plane's faults measured from outside, with `hey` (keep-alive, no retries)
 * as the clients and nothing drained first.
 *
 * - leader-kill: 3 routers on one KV file, 2 backends (register discovery), one `hey` per
 *   router at 10 req/s (30 req/s in all) for 60 s; the leader is SIGKILLed 2 s before a
 *   minute boundary (its pre-warm cron minute falls in the leaderless window). Then, from
 *   the KV the routers left: requests per router shard vs the 200s each `hey` counted, the
 *   expert-load series vs what the backends' own counters say, the lease log (failover
 *   time), and the pre-warm runs around the kill.
 * - split-brain: 2 backends and 2 routers with separate state (own KV files, so own pool
 *   ids) in front of them, both under skewed load for 60 s, both re-planning: every 0.5 s
 *   each backend's active version and owner, how often they changed, the refusals counted
 *   on both sides, the second router's 409 to an admin apply, and each router's requests
 *   answered vs counted in its own KV.
 */
import { parseCli } from "../cli/cli_args.ts";
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import { KvLeaseStore } from "../../router/control/leader/lease_store.ts";
import { EXPERT_PREFIX, VOLUME_PREFIX } from "../../router/control/traffic/bucket_traffic.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../model/traffic.ts";
import { FLEET_TOKEN, leaderLines, startFleet } from "../pool/fleet.ts";
import { freePort, startPool, startProcess } from "../pool/processes.ts";
import { type HeyResult, runHey } from "./hey_run.ts";
import { resultsHeader } from "./results_header.ts";

const { values } = parseCli({
  name: "deno task bench:failover",
  summary: "Leader kill and split brain under hey load: requests answered vs counted, plans.",
  options: {
    scenario: {
      type: "string",
      default: "both",
      value: "<name>",
      description: "leader-kill, split-brain or both",
    },
    out: {
      type: "string",
      default: "docs/results/failover.md",
      value: "<file>",
      description: "where the markdown report goes",
    },
  },
});
const MODEL_DIR = "models/demo";
const LOAD_S = 60;

async function bodyFile(type: string, seed: number): Promise<{ path: string; model: string }> {
  const traffic = (await loadDemoTraffic(MODEL_DIR))!;
  const manifest = JSON.parse(await Deno.readTextFile(`${MODEL_DIR}/moe.json`));
  const { body } = encodeInferRequest(
    demoTokens(traffic, type, 2, createRandom(seed)),
    manifest.d_model,
    { requestType: type },
  );
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeFile(path, body);
  return { path, model: manifest.name };
}

async function getJson(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
  return await response.json();
}

/** Σ routed-expert tokens a backend counted since it started. */
async function expertTokens(url: string): Promise<number> {
  const report = await getJson(`${url}/v2/load`, { authorization: `Bearer ${FLEET_TOKEN}` });
  return (report.parts as { kind: string; tokens: number }[])
    .filter((p) => p.kind === "expert").reduce((sum, p) => sum + p.tokens, 0);
}

/** Requests per shard (router id) and expert tokens in all buckets of a KV file. */
async function kvCounts(path: string) {
  const kv = await Deno.openKv(path);
  const shards: Record<string, number> = {};
  for await (const e of kv.list<{ requests: number }>({ prefix: [...VOLUME_PREFIX] })) {
    const shard = String(e.key.at(-1));
    shards[shard] = (shards[shard] ?? 0) + e.value.requests;
  }
  let tokens = 0;
  for await (const e of kv.list<number[]>({ prefix: [...EXPERT_PREFIX] })) {
    tokens += e.value.reduce((a, b) => a + b, 0);
  }
  const terms = await new KvLeaseStore(kv).terms();
  kv.close();
  return { shards, tokens, terms };
}

function statusLine(h: HeyResult): string {
  const codes = Object.entries(h.statuses).map(([c, n]) => `${c}: ${n}`).join(", ");
  const errors = Object.values(h.errors).reduce((a, b) => a + b, 0);
  return `${codes || "none"}${errors ? `; ${errors} errors` : ""}`;
}

async function leaderKill(): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-failover-" });
  const body = await bodyFile("chat", 3);
  const fleet = await startFleet({
    modelDir: MODEL_DIR,
    routers: 3,
    backends: 2,
    dir,
    routerEnv: { SWITCHYARD_TRAFFIC__BUCKET: "10s" },
  });
  try {
    // Kill 2 s before a minute boundary at least 30 s from now; load from 30 s before it.
    const boundary = Math.ceil((Date.now() + 35_000) / 60_000) * 60_000;
    await new Promise((resolve) => setTimeout(resolve, boundary - 32_000 - Date.now()));
    const loadStart = Date.now();
    const heys = fleet.routers.map((router) =>
      runHey({
        url: `${router.url}/v2/models/${body.model}/infer`,
        concurrency: 2,
        ratePerWorker: 5,
        durationS: LOAD_S,
        bodyFile: body.path,
      })
    );
    const leader = fleet.routers[0]!;
    await new Promise((resolve) => setTimeout(resolve, boundary - 2000 - Date.now()));
    const killAt = Date.now();
    await leader.stop("SIGKILL");
    // Who leads, as a survivor says, every 0.5 s until someone does.
    let newLeaderSeen: number | null = null;
    let staleHolderMs = 0;
    while (newLeaderSeen === null && Date.now() - killAt < 30_000) {
      const status = await getJson(`${fleet.routers[1]!.url}/api/leader`).catch(() => null);
      if (status?.lease?.holder === leader.id) staleHolderMs = Date.now() - killAt;
      if (status?.lease && status.lease.holder !== leader.id) newLeaderSeen = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const results = await Promise.all(heys);
    const prewarm = await getJson(`${fleet.routers[1]!.url}/api/prewarm?limit=20`);
    const counted = await Promise.all(fleet.backends.map((b) => expertTokens(b.url)));
    await fleet.close(); // SIGTERM: survivors flush
    const kv = await kvCounts(fleet.kvPath);
    const takeover = kv.terms.find((t) => t.previousHolder === leader.id);
    const lines = (await Promise.all(fleet.routers.map(leaderLines))).flat();
    const missedRun = lines.find((l) => String(l["msg"]).startsWith("prewarm run missed"));
    const answered = results.map((r) => r.statuses["200"] ?? 0);
    const rows = fleet.routers.map((router, i) => {
      const got = kv.shards[router.id] ?? 0;
      return `| ${router.id}${i === 0 ? " (killed leader)" : ""} | ${statusLine(results[i]!)} | ${
        answered[i]
      } | ${got} | ${answered[i]! - got} |`;
    });
    const totalAnswered = answered.reduce((a, b) => a + b, 0);
    const totalCounted = Object.values(kv.shards).reduce((a, b) => a + b, 0);
    const backendTokens = counted.reduce((a, b) => a + b, 0);
    const decisions = (prewarm.decisions as { at: number }[]).map((d) => d.at)
      .filter((at) => at >= loadStart).sort((a, b) => a - b);
    const t = (ms: number) => `${((ms - killAt) / 1000).toFixed(1)} s`;
    return [
      "## Leader kill (3 routers, 2 backends, one KV file)",
      "",
      `- load: one \`hey\` per router, \`${
        results[0]!.command.replace(/-D \S+/, "-D body.json").replace(
          /http\S+/,
          "<router>/v2/models/demo-moe/infer",
        )
      }\` (10 req/s each, keep-alive, no retries), ${LOAD_S} s; nothing drained before the kill`,
      `- the leader (${leader.id}) SIGKILLed at ${
        new Date(killAt).toISOString()
      }, 2 s before the minute boundary ${
        new Date(boundary).toISOString()
      }; lease TTL 10 s, renewal 3 s (defaults); traffic buckets 10 s`,
      "",
      "| router | hey answers | answered 200 | counted in the KV series (its shard) | answered − counted |",
      "| --- | --- | ---: | ---: | ---: |",
      ...rows,
      `| **all** | | **${totalAnswered}** | **${totalCounted}** | **${
        totalAnswered - totalCounted
      }** |`,
      "",
      `Bound: a router flushes its shard every 1 s, so the killed router may lose at most what it answered in its last second (~10 requests at 10 req/s); the survivors lose nothing.`,
      "",
      "| measure | value |",
      "| --- | --- |",
      `| new leader (lease log) | ${
        takeover
          ? `${takeover.holder}, term ${takeover.term}, ${t(takeover.since)} after the kill`
          : "none"
      } |`,
      `| a survivor's \`/api/leader\` named the dead holder until | ${
        staleHolderMs ? `${(staleHolderMs / 1000).toFixed(1)} s` : "never"
      } after the kill (its lease was still valid); the new one seen ${
        newLeaderSeen ? t(newLeaderSeen) : "never"
      } |`,
      `| expert-load series (KV) vs the backends' counters | ${
        Math.round(kv.tokens)
      } of ${backendTokens} tokens (${
        (100 * kv.tokens / Math.max(1, backendTokens)).toFixed(1)
      } %) |`,
      `| pre-warm runs after the load started (\`/api/prewarm\`, times from the kill) | ${
        decisions.map(t).join(", ") || "none"
      } |`,
      `| the minute ${
        new Date(boundary).toISOString().slice(11, 19)
      } (in the leaderless window) | ${
        missedRun
          ? `run on takeover (${t(Date.parse(String(missedRun["ts"])))}): "${missedRun["msg"]}"`
          : "**not run**"
      } |`,
      "",
    ];
  } finally {
    await fleet.close().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.remove(body.path).catch(() => {});
  }
}

async function splitBrain(): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "switchyard-split-" });
  const body = await bodyFile("chat", 5);
  const admin = "split-admin-token-0123456789";
  const pool = await startPool({
    modelDir: MODEL_DIR,
    backends: 2,
    env: {
      SWITCHYARD_AUTH__ADMIN_TOKEN: admin,
      SWITCHYARD_STATE__KV: `${dir}/a.kv`,
      SWITCHYARD_LOG__LEVEL: "error",
      SWITCHYARD_EXPERT_BALANCER__ADJUST_INTERVAL: "5s",
      SWITCHYARD_EXPERT_BALANCER__THRESHOLD: "0.99",
    },
  });
  const port = freePort();
  const env: Record<string, string> = {
    ...pool.routerEnv(),
    SWITCHYARD_ROUTER__PORT: String(port),
    SWITCHYARD_STATE__KV: `${dir}/b.kv`,
  };
  delete env["SWITCHYARD_STATE__POOL_ID"];
  const second = await startProcess("router/main.ts", { url: `http://127.0.0.1:${port}`, env });
  const auth = { authorization: `Bearer ${pool.token}` };
  try {
    const routers = [pool.router.url, second.url];
    const heys = routers.map((url) =>
      runHey({
        url: `${url}/v2/models/${body.model}/infer`,
        concurrency: 2,
        ratePerWorker: 10,
        durationS: LOAD_S,
        bodyFile: body.path,
      })
    );
    // Every 0.5 s: each backend's active version and owner.
    const seen: { at: number; versions: (number | null)[]; owners: string[] }[] = [];
    const started = Date.now();
    let applyStatus: number | null = null;
    let applyError = "";
    while (Date.now() - started < LOAD_S * 1000) {
      const plans = await Promise.all(
        pool.backends.map((b) => getJson(`${b.url}/v2/plan`, auth).catch(() => null)),
      );
      seen.push({
        at: Date.now() - started,
        versions: plans.map((p) => p?.active ?? null),
        owners: plans.map((p) => p?.owner ? `${p.owner.pool}/${p.owner.term}` : "none"),
      });
      if (applyStatus === null && Date.now() - started > 20_000) {
        const answer = await fetch(`${second.url}/api/plan/apply`, {
          method: "POST",
          headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
          body: "{}",
        });
        applyStatus = answer.status;
        applyError = (await answer.json()).error ?? "";
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const results = await Promise.all(heys);
    const refusedRouter = Number(
      /^switchyard_plan_calls_refused_total (\d+)/m.exec(
        await (await fetch(`${second.url}/metrics`)).text(),
      )?.[1] ?? 0,
    );
    const refusedBackends = await Promise.all(pool.backends.map(async (b) => {
      const text = await (await fetch(`${b.url}/metrics`, { headers: auth })).text();
      return Number(
        /^switchyard_plan_refused_total\{reason="other_pool"\} (\d+)/m.exec(text)?.[1] ?? 0,
      );
    }));
    // A graceful stop (SIGTERM) flushes each router's series before the KV files are read.
    for (const router of [pool.router, second]) {
      router.child.kill("SIGTERM");
      await router.child.status;
    }
    await pool.close();
    const counts = await Promise.all(["a", "b"].map((name) => kvCounts(`${dir}/${name}.kv`)));
    const changes = seen.slice(1).filter((s, i) =>
      s.versions.join() !== seen[i]!.versions.join() || s.owners.join() !== seen[i]!.owners.join()
    );
    const apart = seen.filter((s) => s.versions[0] !== s.versions[1]).length;
    const owners = [...new Set(seen.flatMap((s) => s.owners))];
    const answered = results.map((r) => r.statuses["200"] ?? 0);
    const counted = counts.map((c) => Object.values(c.shards).reduce((a, b) => a + b, 0));
    return [
      "## Split brain (2 routers with separate state, one pool)",
      "",
      `- router A: \`deno task\`-style router, state ${"`a.kv`"}; router B started after it with its own \`b.kv\` (own pool id); both with \`expert_balancer.threshold\` 0.99 and \`adjust_interval\` 5 s so both want to re-plan; 2 backends, demo model`,
      `- load: one \`hey\` per router at 20 req/s (2 workers × 10), ${LOAD_S} s, one skewed request type (chat)`,
      "",
      "| measure | value |",
      "| --- | --- |",
      `| backend owners seen (pool/term) | ${owners.join(", ")} |`,
      `| backend (version, owner) changes over ${LOAD_S} s (polled every 0.5 s) | ${changes.length}${
        changes.length
          ? ` (at ${
            changes.map((c) => `${(c.at / 1000).toFixed(1)} s → v${c.versions.join("/v")}`).join(
              ", ",
            )
          })`
          : ""
      } |`,
      `| polls with the two backends on different versions | ${apart} of ${seen.length} |`,
      `| router B's admin apply at 20 s | ${applyStatus} — ${applyError.slice(0, 240)} |`,
      `| plan calls refused: router B counted / backends counted (other_pool) | ${refusedRouter} / ${
        refusedBackends.join(" + ")
      } |`,
      `| router A: answered 200 / counted in a.kv | ${answered[0]} / ${counted[0]} (${
        statusLine(results[0]!)
      }) |`,
      `| router B: answered 200 / counted in b.kv | ${answered[1]} / ${counted[1]} (${
        statusLine(results[1]!)
      }) |`,
      "",
    ];
  } finally {
    await second.kill().catch(() => {});
    await pool.close().catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.remove(body.path).catch(() => {});
  }
}

const sections: string[] = [];
if (values.scenario !== "split-brain") sections.push(...await leaderKill());
if (values.scenario !== "leader-kill") sections.push(...await splitBrain());
const lines = [
  "# Control-plane faults from outside: leader kill and split brain",
  "",
  ...await resultsHeader({
    command: `deno task bench:failover --scenario ${values.scenario}`,
    notes: [
      "clients: `hey` (Go, keep-alive, no retries); nothing drained before a fault",
      "the machine (2 cores) is shared with other agents' work; runs kept to a minute each",
    ],
  }),
  "",
  ...sections,
];
await Deno.writeTextFile(values.out, lines.join("\n"));
console.log(lines.join("\n"));
