/**
 * @module `bench:peer-hop` steps 2 and 3: the hop on the real stack (router + 2 backends
 * of the demo model, static placement: contiguous expert blocks, so requests cross
 * backends in 0, 1 or every layer).
 *
 *   Step 2 (idle): paced 1-token requests, one at a time with a gap, in turn straight to
 *           each backend and through the router (keep-alive clients). Each answer's
 *           `Server-Timing` says how many layers crossed backends; p50 per class and
 *           target, and the median of every phase.
 *   Step 3 (load): a closed loop through the router; the backends' load reports give the
 *           hop's wall time, the part requests waited on it with nothing of their own
 *           running (exposed), hence the share hidden under local work, and the channel's
 *           host-thread µs per row on each side.
 */
import { startPool } from "../../pool/processes.ts";
import { parseServerTiming } from "../../../shared/server_timing.ts";
import type { LoadReport, PeerReport } from "../../../shared/load_report.ts";
import { quantile } from "../stats.ts";
import { closedLoop } from "../load_generator.ts";
import type { PreparedRequest } from "../workload.ts";
import { waitFor } from "../../wait_for.ts";

/** Idle latency of one target and crossing class. */
export interface IdleCell {
  target: string;
  /** Layers whose rows crossed backends. */
  crossing: number;
  n: number;
  p50Ms: number;
  p90Ms: number;
  /** Median of each `Server-Timing` phase (ms). */
  phases: Record<string, number>;
}

/** The hop under load, from the backends' load reports. */
export interface LoadCell {
  tokensPerS: number;
  p50Ms: number;
  p99Ms: number;
  hops: number;
  /** Σ hop wall time, and the part requests waited on with nothing of their own running. */
  hopMs: number;
  exposedMs: number;
  /** 1 − exposed ÷ wall: hidden under the request's own local work. */
  hiddenShare: number;
  /** covered ÷ wall: hidden under any local work (the executor was busy). */
  coveredShare: number;
  rowsSent: number;
  sendUsPerRow: number;
  serveUsPerRow: number;
}

/** Options of {@linkcode measureStack}. */
export interface StackOptions {
  modelDir: string;
  model: string;
  dModel: number;
  /** `backend.overlap_hops`. */
  overlap: "auto" | "always" | "never";
  /** 1-token requests per target at idle, and the gap between two (ms). */
  idleRequests: number;
  gapMs: number;
  /** Requests for the closed loop, its clients and seconds. */
  load: readonly PreparedRequest[];
  concurrency: number;
  loadS: number;
  /** 1-token inputs (`[d_model]` each) for the idle step. */
  tokens: readonly Float32Array[];
}

/** Runs steps 2 and 3 on a fresh pool. */
export async function measureStack(
  options: StackOptions,
): Promise<{ idle: IdleCell[]; load: LoadCell }> {
  const pool = await startPool({
    modelDir: options.modelDir,
    backends: 2,
    env: {
      SWITCHYARD_EXPERT_BALANCER__STRATEGY: "static",
      SWITCHYARD_BACKEND__OVERLAP_HOPS: String(options.overlap),
    },
  });
  try {
    const auth = { authorization: `Bearer ${pool.token}` };
    await waitForPlan(pool.backends.map((b) => b.url), auth);
    const targets: { name: string; url: string; headers: Record<string, string> }[] = [
      { name: "backend-1", url: pool.backends[0]!.url, headers: auth },
      { name: "backend-2", url: pool.backends[1]!.url, headers: auth },
      { name: "router", url: pool.router.url, headers: {} },
    ];
    // Step 2: idle, targets in turn so drift spreads over all of them.
    const samples = new Map<string, { latencies: number[]; phases: Map<string, number[]> }>();
    for (let i = 0; i < options.idleRequests * targets.length; i++) {
      const target = targets[i % targets.length]!;
      const tokens = options.tokens[i % options.tokens.length]!;
      const { ms, timing } = await once(target.url, options, tokens, target.headers);
      const hop = timing.find((m) => m.name === "hop");
      const crossing = hop?.desc?.startsWith("no layer")
        ? 0
        : Number(/^(\d+) layer/.exec(hop?.desc ?? "")?.[1] ?? NaN);
      if (Number.isFinite(crossing)) {
        const key = `${target.name}/${crossing}`;
        const sample = samples.get(key) ?? { latencies: [] as number[], phases: new Map() };
        sample.latencies.push(ms);
        for (const metric of timing) {
          sample.phases.set(metric.name, [...(sample.phases.get(metric.name) ?? []), metric.ms]);
        }
        samples.set(key, sample);
      }
      await new Promise((resolve) => setTimeout(resolve, options.gapMs));
    }
    const idle = [...samples].map(([key, sample]): IdleCell => {
      const [target, crossing] = key.split("/") as [string, string];
      return {
        target,
        crossing: Number(crossing),
        n: sample.latencies.length,
        p50Ms: quantile(sample.latencies, 0.5),
        p90Ms: quantile(sample.latencies, 0.9),
        phases: Object.fromEntries([...sample.phases].map(([k, v]) => [k, quantile(v, 0.5)])),
      };
    }).sort((a, b) => a.target.localeCompare(b.target) || a.crossing - b.crossing);
    // Step 3: a closed loop through the router, peer counters diffed over it.
    const before = await peerTotals(pool.backends.map((b) => b.url), auth);
    const run = await closedLoop({
      url: `${pool.router.url}/v2/models/${options.model}/infer`,
      requests: options.load,
      concurrency: options.concurrency,
      durationS: options.loadS,
    });
    const after = await peerTotals(pool.backends.map((b) => b.url), auth);
    const d = (key: keyof PeerReport) => after[key] - before[key];
    return {
      idle,
      load: {
        tokensPerS: run.rows / run.seconds,
        p50Ms: quantile(run.latencies, 0.5),
        p99Ms: quantile(run.latencies, 0.99),
        hops: d("hops"),
        hopMs: d("hopMs"),
        exposedMs: d("exposedMs"),
        hiddenShare: d("hopMs") > 0 ? 1 - d("exposedMs") / d("hopMs") : NaN,
        coveredShare: d("hopMs") > 0 ? d("coveredMs") / d("hopMs") : NaN,
        rowsSent: d("rowsSent"),
        sendUsPerRow: d("rowsSent") > 0 ? (d("sendCpuMs") * 1000) / d("rowsSent") : NaN,
        serveUsPerRow: d("rowsServed") > 0 ? (d("serveCpuMs") * 1000) / d("rowsServed") : NaN,
      },
    };
  } finally {
    await pool.close();
  }
}

async function once(
  url: string,
  options: StackOptions,
  tokens: Float32Array,
  headers: Record<string, string>,
) {
  const body = JSON.stringify({
    inputs: [{ name: "input", shape: [1, options.dModel], datatype: "FP32", data: [...tokens] }],
  });
  const started = performance.now();
  const response = await fetch(`${url}/v2/models/${options.model}/infer`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });
  await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== 200) {
    throw new Error(`Cannot measure: ${url} answered ${response.status}`);
  }
  return { ms, timing: parseServerTiming(response.headers.get("server-timing")) };
}

/** Waits (≤ 60 s) until every backend runs a placement plan. */
async function waitForPlan(urls: readonly string[], headers: Record<string, string>) {
  await waitFor("every backend to run a placement plan", async () => {
    const active = await Promise.all(urls.map(async (url) => {
      const response = await fetch(`${url}/v2/plan`, { headers });
      return (await response.json()).active !== null;
    }));
    return active.every(Boolean);
  }, { timeoutMs: 60_000 });
}

/** The backends' peer counters, summed. */
async function peerTotals(
  urls: readonly string[],
  headers: Record<string, string>,
): Promise<PeerReport> {
  const reports = await Promise.all(urls.map(async (url) => {
    const response = await fetch(`${url}/v2/load`, { headers });
    return (await response.json()) as LoadReport;
  }));
  const total: PeerReport = {
    hops: 0,
    rowsSent: 0,
    hopMs: 0,
    exposedMs: 0,
    coveredMs: 0,
    peerServeMs: 0,
    sendCpuMs: 0,
    framesServed: 0,
    rowsServed: 0,
    serveCpuMs: 0,
  };
  for (const report of reports) {
    for (const key of Object.keys(total) as (keyof PeerReport)[]) {
      total[key] += report.peer?.[key] ?? 0;
    }
  }
  return total;
}
