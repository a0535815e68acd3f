/**
 * @module Load generators over HTTP: open loop (Poisson arrivals at a fixed rate,
 * latency measured from the scheduled arrival so a slow server cannot hide queueing)
 * and closed loop (N clients back to back, for capacity). Both bounded in time and
 * in outstanding requests, and both stop by themselves.
 */
import { createRandom } from "../model/prng.ts";
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

async function send(url: string, request: PreparedRequest): Promise<number | string> {
  try {
    const response = await fetch(url, {
      method: "POST",
      body: request.body,
      headers: request.headers,
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

/** Options of {@linkcode openLoop}. */
export interface OpenLoopOptions {
  url: string;
  requests: readonly PreparedRequest[];
  /** Mean arrivals per second. */
  rate: number;
  durationS: number;
  maxOutstanding?: number;
  seed?: number;
}

/** Poisson arrivals at `rate`/s for `durationS`; waits for every answer before returning. */
export async function openLoop(options: OpenLoopOptions): Promise<LoadResult> {
  const random = createRandom(options.seed ?? 3);
  const result = emptyResult();
  const maxOutstanding = options.maxOutstanding ?? 512;
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  const end = t0 + options.durationS * 1000;
  let next = t0;
  let index = 0;
  while (next < end) {
    const now = performance.now();
    while (next <= now && next < end) {
      const scheduled = next;
      next += (-Math.log(1 - random()) / options.rate) * 1000;
      if (inFlight.size >= maxOutstanding) {
        result.shed++;
        continue;
      }
      const request = options.requests[index++ % options.requests.length]!;
      result.sent++;
      const task = send(options.url, request).then((status) => {
        record(result, status, scheduled, t0, request.rows);
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
