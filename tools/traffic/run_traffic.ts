/**
 * @module One traffic run: pre-encoded requests per request type (the bench workload,
 * `tools/bench/workload.ts`), the scenario's rate and type mix over time (`mixes.ts`),
 * Poisson arrivals from the bench's open loop (`tools/bench/load_generator.ts`), and
 * every answer into {@linkcode LiveStats}. Sends only to `url`'s infer endpoint.
 */
import type { FetchLike } from "../../router/runtime/fetch_like.ts";
import { type LoadResult, openLoop } from "../bench/load_generator.ts";
import { type PreparedRequest, prepareWorkload } from "../bench/workload.ts";
import { createRandom } from "../model/prng.ts";
import type { DemoTraffic } from "../model/traffic.ts";
import { LiveStats } from "./live_stats.ts";
import { mixAt, type MixMoment, type MixName, mixSampler } from "./mixes.ts";

/** Options of {@linkcode runTraffic}. */
export interface TrafficOptions {
  /** Router base URL. */
  url: string;
  model: string;
  dModel: number;
  /** Demo token directions; `undefined`: gaussian tokens, types only label the requests. */
  traffic: DemoTraffic | undefined;
  /** Request types in rank order (default: the demo traffic's, else `["default"]`). */
  types?: readonly string[];
  /** Mean requests per second before the scenario's factor. */
  rate: number;
  durationS: number;
  mix: MixName;
  /** Rows per request, drawn uniformly. */
  tokens: { min: number; max: number };
  binary: boolean;
  shiftEveryS?: number;
  /** Requests in flight before arrivals are skipped (default 256). */
  maxOutstanding?: number;
  seed?: number;
  fetch?: FetchLike;
  signal?: AbortSignal;
  /** Receives every send and answer (default a fresh one). */
  stats?: LiveStats;
}

/** What a run did. */
export interface TrafficRun {
  result: LoadResult;
  stats: LiveStats;
  types: readonly string[];
}

/** Distinct pre-encoded requests per type, cycled. */
const REQUESTS_PER_TYPE = 32;

/** The scenario's moment at `tSeconds` for `options` (for the progress label). */
export function momentOf(
  options: Pick<TrafficOptions, "mix" | "durationS" | "shiftEveryS">,
  types: number,
  tSeconds: number,
): MixMoment {
  return mixAt(options.mix, tSeconds, {
    types,
    durationS: options.durationS,
    ...(options.shiftEveryS !== undefined ? { shiftEveryS: options.shiftEveryS } : {}),
  });
}

/** Sends the scenario to `url` until its duration is over (or `signal` aborts). */
export async function runTraffic(options: TrafficOptions): Promise<TrafficRun> {
  const types = options.types ?? options.traffic?.request_types ?? ["default"];
  const seed = options.seed ?? 1;
  // Step 1: a pool of encoded requests per type, so sending costs no encoding.
  const pools = new Map<string, PreparedRequest[]>(types.map((type, i) => [
    type,
    prepareWorkload({
      dModel: options.dModel,
      traffic: options.traffic,
      typeOrder: [type],
      count: REQUESTS_PER_TYPE,
      tokens: options.tokens,
      binary: options.binary,
      seed: seed * 1000 + i,
    }),
  ]));
  const cursor = new Map<string, number>();
  // Step 2: the scenario picks each arrival's type; the open loop paces the arrivals.
  const sample = mixSampler(options.mix, types, {
    durationS: options.durationS,
    random: createRandom(seed + 17),
    ...(options.shiftEveryS !== undefined ? { shiftEveryS: options.shiftEveryS } : {}),
  });
  const stats = options.stats ?? new LiveStats();
  const result = await openLoop({
    url: `${options.url}/v2/models/${encodeURIComponent(options.model)}/infer`,
    durationS: options.durationS,
    rateAt: (t) => options.rate * momentOf(options, types.length, t).rateFactor,
    nextRequest: (t) => {
      const { type } = sample(t);
      const pool = pools.get(type)!;
      const index = cursor.get(type) ?? 0;
      cursor.set(type, index + 1);
      stats.sentOne();
      return pool[index % pool.length]!;
    },
    onAnswer: (answer) => stats.record(answer),
    maxOutstanding: options.maxOutstanding ?? 256,
    seed: seed + 3,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { result, stats, types };
}
