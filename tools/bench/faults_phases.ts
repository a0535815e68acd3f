/**
 * @module The phases of `bench:faults`, each against a running {@linkcode Stack} and
 * measured from outside: offered load at a multiple of capacity (goodput, answers by
 * status, shed answers without Retry-After, "no healthy backend" answers, router RSS),
 * kill -9 of a backend under a fixed rate (failures, restart, load and rotation times),
 * and SIGSTOP of a backend for a while under the same rate (failures, 504s, retries).
 */
import type { FetchLike } from "../../router/runtime/fetch_like.ts";
import { openLoop } from "./load_generator.ts";
import { round, summarize } from "./stats.ts";
import type { PreparedRequest } from "./workload.ts";
import {
  backendReady,
  openFds,
  routerReady,
  rssMiB,
  scrape,
  type Stack,
  sumSeries,
} from "./faults_stack.ts";

/** Non-200 answers seen by the load generator, read through its fetch. */
export interface AnswerTally {
  /** Answers by status (`network` for failed fetches); 200s included. */
  statuses: Record<string, number>;
  /** Answers whose error code was `no_healthy_backend`. */
  noHealthyBackend: number;
  /** 429/503 answers without a Retry-After header. */
  shedWithoutRetryAfter: number;
}

/** A fetch that tallies what comes back (non-200 bodies are read for their code). */
export function tallyingFetch(tally: AnswerTally): FetchLike {
  const count = (key: string) => tally.statuses[key] = (tally.statuses[key] ?? 0) + 1;
  return async (input, init) => {
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      count("network");
      throw error;
    }
    count(String(response.status));
    if (response.status === 200) return response;
    const text = await response.text();
    let code = "";
    try {
      code = String(JSON.parse(text).code ?? "");
    } catch { /* not JSON */ }
    if (code === "no_healthy_backend") tally.noHealthyBackend++;
    if (
      (response.status === 429 || response.status === 503) && !response.headers.has("retry-after")
    ) {
      tally.shedWithoutRetryAfter++;
    }
    return new Response(null, { status: response.status });
  };
}

function newTally(): AnswerTally {
  return { statuses: {}, noHealthyBackend: 0, shedWithoutRetryAfter: 0 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What one offered-load level measured. */
export interface LoadLevel {
  factor: number;
  offered_rps: number;
  sent_rps: number;
  goodput_rps: number;
  goodput_over_capacity: number;
  statuses: Record<string, number>;
  no_healthy_backend: number;
  shed_without_retry_after: number;
  p50_ms: number;
  p99_ms: number;
  router_rss_max_mib: number;
  router_rss_over_idle: number;
  /** The router's JavaScript heap in use right after the level (its own gauge). */
  router_heap_used_mib?: number;
  /** Most open file descriptors of the router (almost all client connections). */
  router_open_fds_max?: number;
  ejections: number;
  healthy_after: number;
}

/** Offered load at `factor` × `capacity` req/s for `seconds` (Poisson arrivals). */
export async function loadLevel(
  stack: Stack,
  options: {
    url: string;
    requests: readonly PreparedRequest[];
    capacity: number;
    factor: number;
    seconds: number;
    idleRss: number;
  },
): Promise<LoadLevel> {
  const routerPid = (await stack.status())!.router.pid!;
  const before = await scrape(stack.routerUrl);
  let maxRss = rssMiB(routerPid);
  let maxFds = openFds(routerPid);
  const sampler = setInterval(() => {
    maxRss = Math.max(maxRss, rssMiB(routerPid) || 0);
    maxFds = Math.max(maxFds, openFds(routerPid));
  }, 250);
  const tally = newTally();
  const rate = options.capacity * options.factor;
  const result = await openLoop({
    url: options.url,
    requests: options.requests,
    rate,
    durationS: options.seconds,
    fetch: tallyingFetch(tally),
    maxOutstanding: 8192,
    seed: Math.round(options.factor * 10),
  });
  clearInterval(sampler);
  const after = await scrape(stack.routerUrl);
  const latency = summarize(result.latencies);
  return {
    factor: options.factor,
    offered_rps: round(rate, 1),
    sent_rps: round(result.sent / result.seconds, 1),
    goodput_rps: round(result.ok / result.seconds, 1),
    goodput_over_capacity: round(result.ok / result.seconds / options.capacity, 3),
    statuses: tally.statuses,
    no_healthy_backend: tally.noHealthyBackend,
    shed_without_retry_after: tally.shedWithoutRetryAfter,
    p50_ms: round(latency.p50, 1),
    p99_ms: round(latency.p99, 1),
    router_rss_max_mib: round(maxRss, 1),
    router_rss_over_idle: round(maxRss / options.idleRss, 2),
    router_heap_used_mib: round(
      sumSeries(after, "switchyard_process_heap_used_bytes") / 2 ** 20,
      1,
    ),
    router_open_fds_max: maxFds,
    ejections: sumSeries(after, "switchyard_router_ejections_total") -
      sumSeries(before, "switchyard_router_ejections_total"),
    healthy_after: (await routerReady(stack.routerUrl))?.healthy ?? 0,
  };
}

/** What the kill -9 phase measured (times in s from the kill; null when not seen). */
export interface KillResult {
  rate_rps: number;
  requests: number;
  failures: number;
  statuses: Record<string, number>;
  ejected_s: number | null;
  restarted_s: number | null;
  backend_ready_s: number | null;
  /** Backend ready → the router routes to it again. */
  ready_to_rotation_s: number | null;
  in_rotation_s: number | null;
  retries: number;
}

/** kill -9 of backend-1 under `rate` req/s; watches it come back into rotation. */
export async function killPhase(
  stack: Stack,
  options: { url: string; requests: readonly PreparedRequest[]; rate: number; maxSeconds: number },
): Promise<KillResult> {
  const victim = (await stack.status())!.backends[0]!;
  const before = await scrape(stack.routerUrl);
  const { tally, stop, load } = faultLoad(options, options.maxSeconds + 10, 40);
  await sleep(3000);
  const killedAt = performance.now();
  const since = () => round((performance.now() - killedAt) / 1000, 2);
  Deno.kill(victim.pid!, "SIGKILL");
  let ejected: number | null = null;
  let restarted: number | null = null;
  let ready: number | null = null;
  let rotation: number | null = null;
  while (performance.now() - killedAt < options.maxSeconds * 1000) {
    const status = await stack.status();
    const pid = status?.backends[0]?.pid;
    if (restarted === null && pid && pid !== victim.pid) restarted = since();
    if (
      restarted !== null && ready === null &&
      await backendReady(stack.backendUrls[0]!, stack.internalToken)
    ) {
      ready = since();
    }
    const healthy = (await routerReady(stack.routerUrl))?.backends.get(victim.name);
    if (ejected === null && healthy === false) ejected = since();
    if (ready !== null && (ejected !== null || restarted !== null) && healthy === true) {
      rotation = since();
      break;
    }
    await sleep(50);
  }
  await sleep(3000);
  stop.abort();
  const result = await load;
  const after = await scrape(stack.routerUrl);
  return {
    rate_rps: options.rate,
    requests: result.sent,
    failures: result.errors,
    statuses: tally.statuses,
    ejected_s: ejected,
    restarted_s: restarted,
    backend_ready_s: ready,
    ready_to_rotation_s: ready !== null && rotation !== null ? round(rotation - ready, 2) : null,
    in_rotation_s: rotation,
    retries: sumSeries(after, "switchyard_router_retries_total") -
      sumSeries(before, "switchyard_router_retries_total"),
  };
}

/** What the SIGSTOP phase measured (times in s from SIGSTOP / SIGCONT). */
export interface StopResult {
  rate_rps: number;
  stopped_s: number;
  requests: number;
  failures: number;
  statuses: Record<string, number>;
  timeouts_504: number;
  ejected_s: number | null;
  back_in_rotation_after_cont_s: number | null;
  retries_timeout: number;
  retries_ejected: number;
  retries_unreachable: number;
  retries_refused: number;
  p99_ms: number;
}

/** SIGSTOP of backend-2 for `stopSeconds` under `rate` req/s, then SIGCONT. */
export async function stopPhase(
  stack: Stack,
  options: {
    url: string;
    requests: readonly PreparedRequest[];
    rate: number;
    stopSeconds: number;
  },
): Promise<StopResult> {
  const victim = (await stack.status())!.backends[1]!;
  const before = await scrape(stack.routerUrl);
  const { tally, stop, load } = faultLoad(options, options.stopSeconds + 120, 41);
  let ejected: number | null = null;
  let back: number | null = null;
  try {
    await sleep(3000);
    const stoppedAt = performance.now();
    Deno.kill(victim.pid!, "SIGSTOP");
    while (performance.now() - stoppedAt < options.stopSeconds * 1000) {
      const healthy = (await routerReady(stack.routerUrl))?.backends.get(victim.name);
      if (ejected === null && healthy === false) {
        ejected = round((performance.now() - stoppedAt) / 1000, 2);
      }
      await sleep(100);
    }
  } finally {
    Deno.kill(victim.pid!, "SIGCONT");
  }
  const continuedAt = performance.now();
  while (performance.now() - continuedAt < 60_000) {
    if ((await routerReady(stack.routerUrl))?.backends.get(victim.name) === true) {
      back = round((performance.now() - continuedAt) / 1000, 2);
      break;
    }
    await sleep(100);
  }
  await sleep(3000);
  stop.abort();
  const result = await load;
  const after = await scrape(stack.routerUrl);
  const delta = (name: string, match = "") =>
    sumSeries(after, name, match) - sumSeries(before, name, match);
  return {
    rate_rps: options.rate,
    stopped_s: options.stopSeconds,
    requests: result.sent,
    failures: result.errors,
    statuses: tally.statuses,
    timeouts_504: tally.statuses["504"] ?? 0,
    ejected_s: ejected,
    back_in_rotation_after_cont_s: back,
    retries_timeout: delta("switchyard_router_retries_total", 'cause="timeout"'),
    retries_ejected: delta("switchyard_router_retries_total", 'cause="ejected"'),
    retries_unreachable: delta("switchyard_router_retries_total", 'cause="unreachable"'),
    retries_refused: delta("switchyard_router_retries_refused_total"),
    p99_ms: round(summarize(result.latencies).p99, 1),
  };
}

/** Open-loop load at `options.rate` that runs until its `stop` is aborted (or `durationS`). */
function faultLoad(
  options: { url: string; requests: readonly PreparedRequest[]; rate: number },
  durationS: number,
  seed: number,
) {
  const tally = newTally();
  const stop = new AbortController();
  const load = openLoop({
    url: options.url,
    requests: options.requests,
    rate: options.rate,
    durationS,
    fetch: tallyingFetch(tally),
    signal: stop.signal,
    seed,
  });
  return { tally, stop, load };
}
