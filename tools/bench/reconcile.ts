// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:reconcile`: how long a restarted backend runs without the
 * router's current plan. Real processes on loopback (a router and backends on a small
 * generated model, plans in a KV file); an operator's plan is made current, then one
 * backend is killed (SIGKILL) and started again, `--restarts` times. Measured per
 * restart, polling the backend's own `GET /v2/plan` every 20 ms: from SIGKILL to ready
 * (`/v2/health/ready`, the model loaded), and from ready to its active plan equal to the
 * router's current version. Writes a Markdown report with the command in it.
 */
import { parseCli } from "../cli/cli_args.ts";
import { generateModel } from "../model/generate.ts";
import { startPool, type TestPool } from "../pool/processes.ts";
import { waitFor } from "../wait_for.ts";

const ADMIN = "bench-admin-token-0123456789";

async function backendActive(pool: TestPool, index: number): Promise<number | null> {
  try {
    const response = await fetch(`${pool.backends[index]!.url}/v2/plan`, {
      headers: { authorization: `Bearer ${pool.token}` },
      signal: AbortSignal.timeout(2000),
    });
    return (await response.json()).active ?? null;
  } catch {
    return null;
  }
}

async function routerVersion(pool: TestPool): Promise<number | null> {
  const body = await (await fetch(`${pool.router.url}/api/plan`)).json();
  return body.version ?? null;
}

/** Reconciliation is timed: probe every 20 ms (a probe that fails ends the run). */
const PROMPT = (timeoutMs: number) => ({ timeoutMs, intervalMs: 20 });

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const { values } = parseCli({
    name: "deno task bench:reconcile",
    summary: "Kills and restarts one backend repeatedly; measures how long it runs without\n" +
      "the router's current plan (ready → reconciled). Real processes on loopback.",
    options: {
      restarts: { type: "string", default: "5", value: "<n>", description: "restarts to time" },
      backends: { type: "string", default: "2", value: "<n>", description: "backends in the pool" },
      out: {
        type: "string",
        default: "docs/results/reconcile.md",
        value: "<file>",
        description: "Markdown report ('' = stdout only)",
      },
    },
  });
  const restarts = Number(values.restarts);
  const backends = Number(values.backends);
  const dir = await Deno.makeTempDir({ prefix: "switchyard-reconcile-" });
  await generateModel(`${dir}/model`, {
    name: "bench-moe",
    dModel: 32,
    dFf: 64,
    layers: 2,
    experts: 8,
    topK: 2,
    seed: 11,
  });
  const pool = await startPool({
    modelDir: `${dir}/model`,
    backends,
    env: { SWITCHYARD_STATE__KV: `${dir}/state.kv`, SWITCHYARD_AUTH__ADMIN_TOKEN: ADMIN },
  });
  const rows: { killToReadyMs: number; readyToPlanMs: number }[] = [];
  let version: number | null = null;
  try {
    await waitFor("a plan", async () => (await routerVersion(pool)) ?? undefined, PROMPT(60_000));
    // An operator's plan (not the static one), so "the current plan" is not a default.
    const slots = backends * (Math.ceil(8 / backends) + 1);
    const apply = await fetch(`${pool.router.url}/api/plan/apply`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({
        phy2log: [
          Array.from({ length: slots }, (_, i) => (i * 3) % 8),
          Array.from({ length: slots }, (_, i) => (7 - (i % 8) + 8) % 8),
        ],
      }),
    });
    if (!apply.ok) throw new Error(`apply answered ${apply.status}: ${await apply.text()}`);
    await apply.body?.cancel();
    version = await routerVersion(pool);
    const index = backends - 1;
    for (let i = 0; i < restarts; i++) {
      await waitFor(
        "the plan active",
        async () => (await backendActive(pool, index)) === version,
        PROMPT(30_000),
      );
      const killed = performance.now();
      await pool.restartBackend(index);
      const ready = performance.now();
      await waitFor(
        "the plan active again",
        async () => (await backendActive(pool, index)) === version,
        PROMPT(60_000),
      );
      const reconciled = performance.now();
      rows.push({ killToReadyMs: ready - killed, readyToPlanMs: reconciled - ready });
      console.log(
        `restart ${i + 1}: kill → ready ${
          Math.round(ready - killed)
        } ms, ready → plan v${version} ${Math.round(reconciled - ready)} ms`,
      );
    }
  } finally {
    await pool.close();
    await Deno.remove(dir, { recursive: true });
  }
  const ready = rows.map((r) => r.readyToPlanMs);
  const total = rows.map((r) => r.killToReadyMs + r.readyToPlanMs);
  const report = [
    "# Backend restart → current plan (`bench:reconcile`)",
    "",
    `Command: \`deno task bench:reconcile --restarts ${restarts} --backends ${backends}\``,
    "",
    `One run on ${navigator.hardwareConcurrency} cores (other work on the machine not controlled), ` +
    `${backends} backends and a router as real processes on loopback, a 2-layer × 8-expert ` +
    `generated model, plans in a KV file, load rounds every 1 s (the default). The current plan ` +
    `is an operator's (version ${version}); backend-${backends} is SIGKILLed and started again ` +
    `${restarts} times. "Ready → plan" is from its \`/v2/health/ready\` answering 200 to its ` +
    `\`GET /v2/plan\` reporting the router's current version (polled every 20 ms). Target ` +
    `(issue 12): within 5 s.`,
    "",
    "| restart | kill → ready (ms) | ready → current plan (ms) | kill → current plan (ms) |",
    "| ------: | ----------------: | ------------------------: | -----------------------: |",
    ...rows.map((r, i) =>
      `| ${i + 1} | ${Math.round(r.killToReadyMs)} | ${Math.round(r.readyToPlanMs)} | ${
        Math.round(r.killToReadyMs + r.readyToPlanMs)
      } |`
    ),
    "",
    `Ready → current plan: median ${Math.round(median(ready))} ms, max ${
      Math.round(Math.max(...ready))
    } ms. Kill → current plan: median ${Math.round(median(total))} ms, max ${
      Math.round(Math.max(...total))
    } ms.`,
    "",
    "How it works: every load round (1 s) the leader compares each backend's reported plan",
    "(`plan.active` in its load report) with the current plan and stages + activates it on a",
    "backend that differs (`router/control/balancer/plan_reconciler.ts`). The wait is at most one round",
    "for the report, plus staging (loading that backend's experts) and activation.",
    "",
  ].join("\n");
  if (values.out) await Deno.writeTextFile(values.out, report);
  console.log(report);
}

if (import.meta.main) await main();
