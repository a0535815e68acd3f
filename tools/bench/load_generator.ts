/**
 * @module Load generators over HTTP: open loop (Poisson arrivals at a fixed rate, or
 * gamma-distributed gaps with a burstiness as vLLM `bench serve`'s `--burstiness`;
 * latency measured from the scheduled arrival so a slow server cannot hide queueing)
 * and closed loop (N clients back to back, for capacity). Both bounded in time and
 * in outstanding requests, and both stop by themselves.
 */
import type { FetchLike } from "../../router/runtime/fetch_like.ts";
import { createRandom } from "../model/prng.ts";
import { gammaGaps } from "./arrivals.ts";
import type { PreparedRequest } from "./workload.ts";

/** Outcome of one load run. */
export interface LoadResult {
  /** Seconds the run lasted (until the last answer). */
  seconds: number;
  sent: number;
  ok: number;
  errors: number;
  /** Status code counts of non-200 answers (and `network` for failed fetches). */
  errorKinds: Record<string, number>;
  /** Arrivals not sent because `maxOutstanding` requests were already in flight. */
  shed: number;
  /** Rows answered successfully. */
  rows: number;
  /** Latencies (ms) of successful requests. */
  latencies: number[];
  /** Per successful request: [completion time s since start, latency ms, rows]. */
  timeline: [number, number, number][];
}

async function send(
  url: string,
  request: PreparedRequest,
  fetchLike: FetchLike = fetch,
): Promise<number | string> {
  try {
    const response = await fetchLike(url, {
      method: "POST",
      body: request.body,
      headers: request.headers,
      redirect: "manual", // never follow the target anywhere else
    });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return "network";
  }
}

/** A result with nothing recorded yet. */
export function emptyResult(): LoadResult {
  return {
    seconds: 0,
    sent: 0,
    ok: 0,
    errors: 0,
    errorKinds: {},
    shed: 0,
    rows: 0,
    latencies: [],
    timeline: [],
  };
}

function record(
  result: LoadResult,
  status: number | string,
  started: number,
  t0: number,
  rows: number,
) {
  const done = performance.now();
  if (status === 200) {
    result.ok++;
    result.rows += rows;
    result.latencies.push(done - started);
    result.timeline.push([(done - t0) / 1000, done - started, rows]);
  } else {
    result.errors++;
    result.errorKinds[String(status)] = (result.errorKinds[String(status)] ?? 0) + 1;
  }
}

/** One answer of an open-loop run, for live displays. */
export interface OpenLoopAnswer {
  /** HTTP status, or `network` when the request failed before an answer. */
  status: number | string;
  /** From the scheduled arrival to the answer. */
  latencyMs: number;
  rows: number;
  requestType: string;
}

/** Options of {@linkcode openLoop}. */
export interface OpenLoopOptions {
  url: string;
  /** Requests sent in turn (unless `nextRequest` picks them). */
  requests?: readonly PreparedRequest[];
  /** Mean arrivals per second (unless `rateAt` varies it). */
  rate?: number;
  durationS: number;
  maxOutstanding?: number;
  seed?: number;
  /**
   * Shape of the gamma-distributed gaps between arrivals (default 1: Poisson); below 1
   * arrivals come in bursts, above 1 more evenly (`arrivals.ts`).
   */
  burstiness?: number;
  /** Arrival rate at `t` seconds into the run (piecewise-constant scenarios). */
  rateAt?: (tSeconds: number) => number;
  /** The request of an arrival at `t` seconds (time-varying mixes). */
  nextRequest?: (tSeconds: number) => PreparedRequest;
  /** Called for every answer as it arrives. */
  onAnswer?: (answer: OpenLoopAnswer) => void;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Stops sending early (in-flight requests still complete). */
  signal?: AbortSignal;
}

/**
 * Poisson (or gamma, `burstiness`) arrivals at `rate`/s for `durationS`; waits for every
 * answer before returning.
 */
export async function openLoop(options: OpenLoopOptions): Promise<LoadResult> {
  const random = createRandom(options.seed ?? 3);
  const result = emptyResult();
  const maxOutstanding = options.maxOutstanding ?? 512;
  const rateAt = options.rateAt ?? (() => options.rate ?? 1);
  const requests = options.requests ?? [];
  let index = 0;
  const nextRequest = options.nextRequest ?? (() => requests[index++ % requests.length]!);
  if (options.nextRequest === undefined && requests.length === 0) {
    throw new RangeError("Cannot run an open loop: no requests and no nextRequest");
  }
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  const end = t0 + options.durationS * 1000;
  const gap = gammaGaps(random, options.burstiness ?? 1);
  const interval = (at: number) => gap(rateAt((at - t0) / 1000)) * 1000;
  let next = t0;
  while (next < end && !options.signal?.aborted) {
    const now = performance.now();
    while (next <= now && next < end) {
      const scheduled = next;
      next += interval(next);
      if (inFlight.size >= maxOutstanding) {
        result.shed++;
        continue;
      }
      const request = nextRequest((scheduled - t0) / 1000);
      result.sent++;
      const task = send(options.url, request, options.fetch).then((status) => {
        record(result, status, scheduled, t0, request.rows);
        options.onAnswer?.({
          status,
          latencyMs: performance.now() - scheduled,
          rows: request.rows,
          requestType: request.requestType,
        });
        inFlight.delete(task);
      });
      inFlight.add(task);
    }
    const wait = Math.max(0, Math.min(next, end) - performance.now());
    await new Promise((resolve) => setTimeout(resolve, wait > 1 ? wait - 0.5 : 0));
  }
  await Promise.all(inFlight);
  result.seconds = (performance.now() - t0) / 1000;
  return result;
}

/** Options of {@linkcode closedLoop}. */
export interface ClosedLoopOptions {
  url: string;
  requests: readonly PreparedRequest[];
  concurrency: number;
  durationS: number;
}

/** `concurrency` clients sending back to back for `durationS`. */
export async function closedLoop(options: ClosedLoopOptions): Promise<LoadResult> {
  const result = emptyResult();
  const t0 = performance.now();
  const end = t0 + options.durationS * 1000;
  let index = 0;
  const client = async () => {
    while (performance.now() < end) {
      const request = options.requests[index++ % options.requests.length]!;
      const started = performance.now();
      result.sent++;
      record(result, await send(options.url, request), started, t0, request.rows);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, client));
  result.seconds = (performance.now() - t0) / 1000;
  return result;
}
