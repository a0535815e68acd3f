/**
 * @module `bench:peer-hop` steps 2 and 3: the hop on the real stack (router + 2 backends
 * of the demo model, static placement: contiguous expert blocks, so requests cross
 * backends in 0, 1 or every layer), one pool per `backend.overlap_hops` mode, measured
 * side by side in rotating rounds.
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
import { addPeer, NO_PEER } from "../../../router/control/load/remote_row_cost.ts";

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

/** Options of {@linkcode measureStacks}. */
export interface StackOptions {
  modelDir: string;
  model: string;
  dModel: number;
  /** `backend.overlap_hops` of each pool (one pool per mode, all started at once). */
  modes: readonly OverlapMode[];
  /** Rounds: every mode measured once per round, the order rotating. */
  rounds: number;
  /** 1-token requests per target and pool at idle (over all rounds), and the gap between two (ms). */
  idleRequests: number;
  gapMs: number;
  /** Requests for the closed loop, its clients and seconds per pool (over all rounds). */
  load: readonly PreparedRequest[];
  concurrency: number;
  loadS: number;
  /** 1-token inputs (`[d_model]` each) for the idle step. */
  tokens: readonly Float32Array[];
}

/** `backend.overlap_hops`. */
export type OverlapMode = "auto" | "always" | "never";

type Pool = Awaited<ReturnType<typeof startPool>>;

interface Samples {
  idle: Map<string, { latencies: number[]; phases: Map<string, number[]> }>;
  rows: number;
  seconds: number;
  latencies: number[];
  peer: PeerReport;
}

/**
 * Steps 2 and 3 on one pool per mode, side by side: every pool starts before anything is
 * measured, then each step runs in rounds whose order rotates over the pools, so drift
 * on a shared machine spreads over all of them.
 */
export async function measureStacks(
  options: StackOptions,
): Promise<{ overlap: OverlapMode; idle: IdleCell[]; load: LoadCell }[]> {
  const pools: Pool[] = [];
  try {
    for (const mode of options.modes) {
      pools.push(
        await startPool({
          modelDir: options.modelDir,
          backends: 2,
          env: {
            SWITCHYARD_EXPERT_BALANCER__STRATEGY: "static",
            SWITCHYARD_BACKEND__OVERLAP_HOPS: mode,
          },
        }),
      );
    }
    for (const pool of pools) {
      await waitForPlan(pool.backends.map((b) => b.url), auth(pool));
    }
    const samples: Samples[] = pools.map(() => ({
      idle: new Map(),
      rows: 0,
      seconds: 0,
      latencies: [],
      peer: { ...NO_PEER },
    }));
    const order = (round: number) => pools.map((_, i) => (i + round) % pools.length);
    // Step 2: idle, pools in rotating order, targets in turn within each.
    const perRound = Math.ceil(options.idleRequests / options.rounds);
    for (let round = 0; round < options.rounds; round++) {
      for (const i of order(round)) await idleRound(pools[i]!, samples[i]!, perRound, options);
    }
    // Step 3: a closed loop through each router, peer counters diffed over it.
    for (let round = 0; round < options.rounds; round++) {
      for (const i of order(round)) {
        await loadRound(pools[i]!, samples[i]!, options.loadS / options.rounds, options);
      }
    }
    return options.modes.map((overlap, i) => ({
      overlap,
      idle: idleCells(samples[i]!),
      load: loadCell(samples[i]!),
    }));
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

function auth(pool: Pool): Record<string, string> {
  return { authorization: `Bearer ${pool.token}` };
}

async function idleRound(pool: Pool, samples: Samples, requests: number, options: StackOptions) {
  const targets: { name: string; url: string; headers: Record<string, string> }[] = [
    { name: "backend-1", url: pool.backends[0]!.url, headers: auth(pool) },
    { name: "backend-2", url: pool.backends[1]!.url, headers: auth(pool) },
    { name: "router", url: pool.router.url, headers: {} },
  ];
  for (let i = 0; i < requests * targets.length; i++) {
    const target = targets[i % targets.length]!;
    const tokens = options.tokens[i % options.tokens.length]!;
    const { ms, timing } = await once(target.url, options, tokens, target.headers);
    const hop = timing.find((m) => m.name === "hop");
    const crossing = hop?.desc?.startsWith("no layer")
      ? 0
      : Number(/^(\d+) layer/.exec(hop?.desc ?? "")?.[1] ?? NaN);
    if (Number.isFinite(crossing)) {
      const key = `${target.name}/${crossing}`;
      const sample = samples.idle.get(key) ?? { latencies: [] as number[], phases: new Map() };
      sample.latencies.push(ms);
      for (const metric of timing) {
        sample.phases.set(metric.name, [...(sample.phases.get(metric.name) ?? []), metric.ms]);
      }
      samples.idle.set(key, sample);
    }
    await new Promise((resolve) => setTimeout(resolve, options.gapMs));
  }
}

async function loadRound(pool: Pool, samples: Samples, seconds: number, options: StackOptions) {
  const urls = pool.backends.map((b) => b.url);
  const before = await peerTotals(urls, auth(pool));
  const run = await closedLoop({
    url: `${pool.router.url}/v2/models/${options.model}/infer`,
    requests: options.load,
    concurrency: options.concurrency,
    durationS: seconds,
  });
  const after = await peerTotals(urls, auth(pool));
  samples.rows += run.rows;
  samples.seconds += run.seconds;
  samples.latencies.push(...run.latencies);
  for (const key of Object.keys(samples.peer) as (keyof PeerReport)[]) {
    samples.peer[key] += after[key] - before[key];
  }
}

function idleCells(samples: Samples): IdleCell[] {
  return [...samples.idle].map(([key, sample]): IdleCell => {
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
}

function loadCell({ peer, rows, seconds, latencies }: Samples): LoadCell {
  return {
    tokensPerS: rows / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    hops: peer.hops,
    hopMs: peer.hopMs,
    exposedMs: peer.exposedMs,
    hiddenShare: peer.hopMs > 0 ? 1 - peer.exposedMs / peer.hopMs : NaN,
    coveredShare: peer.hopMs > 0 ? peer.coveredMs / peer.hopMs : NaN,
    rowsSent: peer.rowsSent,
    sendUsPerRow: peer.rowsSent > 0 ? (peer.sendCpuMs * 1000) / peer.rowsSent : NaN,
    serveUsPerRow: peer.rowsServed > 0 ? (peer.serveCpuMs * 1000) / peer.rowsServed : NaN,
  };
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
  return reports.reduce((total, report) => addPeer(total, report.peer ?? NO_PEER), NO_PEER);
}
