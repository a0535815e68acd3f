/**
 * @module Throughput, latency percentiles and goodput of one load phase, pure — the
 * measures of vLLM `bench serve`: a request is "good" when it was answered 200 within
 * the latency SLO; goodput is good requests per second, attainment their share of all
 * arrivals (errors, and arrivals the generator shed, count as not good).
 */
import type { LoadResult } from "../load_generator.ts";
import { quantile } from "../stats.ts";

/** What one phase measured against one SLO. */
export interface PhaseMeasure {
  /** Seconds from the phase's start to its last answer. */
  seconds: number;
  /** Arrivals: requests sent plus those the open loop shed (512 outstanding). */
  arrivals: number;
  ok: number;
  errors: number;
  shed: number;
  /** Successful requests per second. */
  throughputRps: number;
  /** Successful rows (tokens) per second. */
  tokensPerS: number;
  /** Latency percentiles and mean of successful requests (ms); NaN when none. */
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  /** Requests answered 200 within the SLO, per second. */
  goodRps: number;
  /** Good requests ÷ arrivals (0 when there were none). */
  attainment: number;
}

/** The measures of `result` against `sloMs`. */
export function measurePhase(result: LoadResult, sloMs: number): PhaseMeasure {
  const seconds = Math.max(result.seconds, 1e-9);
  const good = result.latencies.filter((ms) => ms <= sloMs).length;
  const arrivals = result.sent + result.shed;
  const mean = result.latencies.length === 0
    ? NaN
    : result.latencies.reduce((a, b) => a + b, 0) / result.latencies.length;
  return {
    seconds: result.seconds,
    arrivals,
    ok: result.ok,
    errors: result.errors,
    shed: result.shed,
    throughputRps: result.ok / seconds,
    tokensPerS: result.rows / seconds,
    p50: quantile(result.latencies, 0.5),
    p90: quantile(result.latencies, 0.9),
    p99: quantile(result.latencies, 0.99),
    mean,
    goodRps: good / seconds,
    attainment: arrivals === 0 ? 0 : good / arrivals,
  };
}

/** The part of `result` whose answers completed in `[fromS, toS)` of its clock. */
export function slice(result: LoadResult, fromS: number, toS: number): LoadResult {
  const timeline = result.timeline.filter(([at]) => at >= fromS && at < toS);
  return {
    seconds: Math.max(0, Math.min(toS, result.seconds) - fromS),
    // Sent, errors and shed are not timed per request: the slice counts answers only.
    sent: timeline.length,
    ok: timeline.length,
    errors: 0,
    errorKinds: {},
    shed: 0,
    rows: timeline.reduce((sum, [, , rows]) => sum + rows, 0),
    latencies: timeline.map(([, ms]) => ms),
    timeline: timeline.map(([at, ms, rows]) => [at - fromS, ms, rows]),
  };
}

/**
 * `whole` without its first `rampS` seconds: the answers completed after it (latency,
 * throughput); errors and requests sent are the whole run's (they are rare in a closed loop,
 * and none may go uncounted).
 */
export function steadyPart(whole: LoadResult, rampS: number): LoadResult {
  const part = slice(whole, rampS, Number.POSITIVE_INFINITY);
  return {
    ...part,
    errors: whole.errors,
    errorKinds: whole.errorKinds,
    sent: part.ok + whole.errors,
  };
}
