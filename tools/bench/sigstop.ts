// deno-lint-ignore-file no-console
/**
 * @module `deno task bench:sigstop [--stop 14] [--out docs/results/sigstop.md]`: one
 * backend of two SIGSTOPped (its process hangs; its sockets stay open) under `hey` load,
 * as the issue ran it, with the router's view sampled every 0.5 s from outside: each
 * backend's state and load-report age (`/api/load`), the alerts (`/api/alerts`), and the
 * dashboard in Chromium. Also saves the dashboard screenshots the closing note shows:
 * `docs/results/screenshots/dashboard-no-data.png` (a fresh pool, no traffic yet),
 * `dashboard-stopped-backend.png` (mid-stop) and `dashboard-no-fresh-load.png` (both
 * backends stopped for a moment: the last heatmap greyed with its age).
 */
import type { Page } from "playwright-core";
import { parseCli } from "../cli/cli_args.ts";
import { launchChromium } from "../browser/chromium.ts";
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, loadDemoTraffic } from "../model/traffic.ts";
import { startPool } from "../pool/processes.ts";
import { runHey } from "./hey_run.ts";
import { resultsHeader } from "./results_header.ts";

const { values } = parseCli({
  name: "deno task bench:sigstop",
  summary: "SIGSTOP one backend of two under hey load: report ages, alerts, screenshots.",
  options: {
    stop: { type: "string", default: "14", value: "<s>", description: "seconds stopped" },
    out: {
      type: "string",
      default: "docs/results/sigstop.md",
      value: "<file>",
      description: "where the markdown report goes",
    },
  },
});
const MODEL_DIR = "models/demo";
const SHOTS = "docs/results/screenshots";
const stopS = Number(values.stop);

const traffic = (await loadDemoTraffic(MODEL_DIR))!;
const manifest = JSON.parse(await Deno.readTextFile(`${MODEL_DIR}/moe.json`));
const bodyFile = await Deno.makeTempFile({ suffix: ".json" });
await Deno.writeFile(
  bodyFile,
  encodeInferRequest(demoTokens(traffic, "code", 2, createRandom(9)), manifest.d_model, {
    requestType: "code",
  }).body,
);
const pool = await startPool({
  modelDir: MODEL_DIR,
  backends: 2,
  env: { SWITCHYARD_LOG__LEVEL: "error" },
});
const browser = await launchChromium();
const url = pool.router.url;

interface Sample {
  t: number;
  backends: { name: string; state: string; age: number | null }[];
  alerts: string[];
}

async function sample(t0: number): Promise<Sample> {
  const [load, alerts] = await Promise.all([
    fetch(`${url}/api/load`).then((r) => r.json()),
    fetch(`${url}/api/alerts`).then((r) => r.json()),
  ]);
  return {
    t: (Date.now() - t0) / 1000,
    backends: (load.backends as { name: string; state: string; report_age_ms: number | null }[])
      .map((b) => ({ name: b.name, state: b.state, age: b.report_age_ms })),
    alerts: (alerts.active as { kind: string; subject: string; fired_at: number }[])
      .filter((a) => a.kind === "backend_down")
      .map((a) => `${a.subject} since ${((a.fired_at - t0) / 1000).toFixed(1)} s`),
  };
}

async function shot(page: Page, name: string): Promise<string> {
  await Deno.mkdir(SHOTS, { recursive: true });
  const path = `${SHOTS}/${name}`;
  await page.screenshot({ path, fullPage: false });
  return path;
}

const pid = (i: number) => pool.backends[i]!.child.pid;
const lines: string[] = [];
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  // The no-data picture of a healthy pool: every backend reporting, no traffic yet.
  for (let i = 0; i < 120; i++) {
    const load = await fetch(`${url}/api/load`).then((r) => r.json());
    if (load.backends.every((b: { state: string }) => b.state === "fresh")) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await page.goto(`${url}/dashboard`);
  await page.waitForFunction(() =>
    // deno-lint-ignore no-explicit-any
    ((globalThis as any).switchyardDashboard?.updates ?? 0) > 1
  );
  const noData = await shot(page, "dashboard-no-data.png");
  // Warm-up: the first load re-plans and the backends compose their layer executables
  // (seconds of a busy main thread on this machine); wait until no backend_down fires.
  const heyOptions = {
    url: `${url}/v2/models/${manifest.name}/infer`,
    concurrency: 2,
    ratePerWorker: 10,
    bodyFile,
  };
  await runHey({ ...heyOptions, durationS: 15 });
  for (let i = 0; i < 60; i++) {
    const alerts = await fetch(`${url}/api/alerts`).then((r) => r.json());
    if (!alerts.active.some((a: { kind: string }) => a.kind === "backend_down")) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const hey = runHey({ ...heyOptions, durationS: 3 + stopS + 16 });
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const t0 = Date.now();
  Deno.kill(pid(1), "SIGSTOP");
  const samples: Sample[] = [];
  let stoppedShot = "";
  while (Date.now() - t0 < (stopS + 14) * 1000) {
    samples.push(await sample(t0));
    if (!stoppedShot && Date.now() - t0 > (stopS - 4) * 1000) {
      stoppedShot = await shot(page, "dashboard-stopped-backend.png");
    }
    if (Date.now() - t0 >= stopS * 1000 && samples.at(-2)?.t! < stopS) Deno.kill(pid(1), "SIGCONT");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const result = await hey;
  // Both stopped for a moment: the dashboard keeps the last heatmap, greyed, with its age.
  Deno.kill(pid(0), "SIGSTOP");
  Deno.kill(pid(1), "SIGSTOP");
  await new Promise((resolve) => setTimeout(resolve, 6000));
  const noFresh = await shot(page, "dashboard-no-fresh-load.png");
  Deno.kill(pid(0), "SIGCONT");
  Deno.kill(pid(1), "SIGCONT");

  const first = (pred: (s: Sample) => boolean) => samples.find(pred)?.t ?? null;
  const b2 = (s: Sample) => s.backends.find((b) => b.name === "backend-2")!;
  const b1 = (s: Sample) => s.backends.find((b) => b.name === "backend-1")!;
  const during = samples.filter((s) => s.t < stopS);
  const staleAt = first((s) => b2(s).state !== "fresh");
  const down = (s: Sample) => s.alerts.some((a) => a.startsWith("backend-2 "));
  const firedAt = first(down);
  const resolvedAt = samples.find((s) => s.t > stopS && !down(s))?.t ?? null;
  const freshAgain = first((s) => s.t > stopS && b2(s).state === "fresh");
  const healthyMaxAge = Math.max(...during.map((s) => b1(s).age ?? Infinity));
  const healthyStale = during.filter((s) => b1(s).state !== "fresh").length;
  const f = (v: number | null) => v === null ? "never" : `${v.toFixed(1)} s`;
  lines.push(
    "# One backend of two SIGSTOPped under load",
    "",
    ...await resultsHeader({
      command: `deno task bench:sigstop --stop ${values.stop}`,
      notes: [
        "stack: router + 2 backends (demo model), state in memory, alerts at their defaults (raise after 3 rounds, clear after 10)",
        "load: `hey -c 2 -q 10` (20 req/s, keep-alive, no retries), one request type; 15 s of it as a warm-up, then until no backend_down fires, before the stop",
        "the machine (2 cores) is shared with other agents' work",
      ],
    }),
    "",
    `backend-2 SIGSTOPped at t = 0 for ${stopS} s, then SIGCONT. Sampled from outside every 0.5 s.`,
    "",
    "| measure | value |",
    "| --- | --- |",
    `| backend-2 stale/down after | ${f(staleAt)} |`,
    `| backend_down fired after | ${f(firedAt)} |`,
    `| backend-1 (running) while backend-2 was stopped | ${healthyStale} of ${during.length} samples not fresh; report age at most ${
      (healthyMaxAge / 1000).toFixed(1)
    } s |`,
    `| backend-2 fresh again after SIGCONT | ${
      freshAgain === null ? "never" : `${(freshAgain - stopS).toFixed(1)} s`
    } |`,
    `| backend_down resolved after SIGCONT | ${
      resolvedAt === null
        ? "not within the run (clear_after 10 rounds)"
        : `${(resolvedAt - stopS).toFixed(1)} s`
    } |`,
    `| hey answers | ${Object.entries(result.statuses).map(([c, n]) => `${c}: ${n}`).join(", ")}${
      Object.keys(result.errors).length ? `; errors ${JSON.stringify(result.errors)}` : ""
    } |`,
    "",
    `Screenshots: \`${noData}\` (fresh pool, no traffic: n/a, never 1.000), \`${stoppedShot}\` (backend-2 stopped), \`${noFresh}\` (both stopped: the last heatmap greyed with its age).`,
    "",
    "| t (s) | backend-1 state, report age | backend-2 state, report age | backend_down firing (fired at, s) |",
    "| ---: | --- | --- | --- |",
    ...samples.map((s) =>
      `| ${s.t.toFixed(1)} | ${b1(s).state}, ${((b1(s).age ?? 0) / 1000).toFixed(1)} s | ${
        b2(s).state
      }, ${((b2(s).age ?? 0) / 1000).toFixed(1)} s | ${s.alerts.join(", ")} |`
    ),
    "",
  );
} finally {
  try {
    Deno.kill(pid(0), "SIGCONT");
    Deno.kill(pid(1), "SIGCONT");
  } catch { /* gone */ }
  await browser.close();
  await pool.close();
  await Deno.remove(bodyFile);
}
await Deno.writeTextFile(values.out, lines.join("\n"));
console.log(lines.join("\n"));
