/**
 * @module The pre-warm benchmark's workload: a seeded 3-day trace whose last day holds a
 * declared 5× event at 20:00 with its own request mix (70 % `code`), pre-encoded requests
 * per request type, the expert affinity of each type measured through the router, and the
 * trace's history written into a traffic store (volume and, for the last hours, affinity).
 *
 * Rates. The replay sends `baseRps` real requests/s at the event's start without the event
 * (20:00 on the trace's diurnal shape), following the shape and the event around it; the
 * trace's own absolute rate only shapes the history the forecasters see.
 */
import { encodeInferRequest } from "../../shared/infer_request_codec.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { emptyModelBucket } from "../../router/control/traffic/bucket_traffic.ts";
import type { TrafficStore } from "../../router/control/traffic/traffic_store.ts";
import { createRandom } from "../model/prng.ts";
import { demoTokens, type DemoTraffic } from "../model/traffic.ts";
import { type SyntheticTrace, syntheticTrace } from "../traffic/synthetic_trace.ts";

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
const DAY = 86_400_000;

/** The request mix outside the event, and the event's own (70 % one type). */
export const BASE_MIX = { chat: 0.5, translate: 0.3, summarize: 0.2 };
export const EVENT_MIX = { code: 0.7, math: 0.2, chat: 0.1 };

/** The trace and the event's instants (simulated ms). */
export interface PrewarmScenario {
  trace: SyntheticTrace;
  /** Event start (T) and end. */
  start: number;
  end: number;
  multiplier: number;
  /** Real requests per trace request: the trace's history scaled to the replay's rate. */
  scale: number;
  /** Real requests/s at `t` (simulated ms): `baseRps` × shape(t) ÷ shape(T) × the event. */
  rpsAt(t: number): number;
  mixAt(t: number): Record<string, number>;
}

/** The scenario of one seed; see the module doc. */
export function prewarmScenario(
  seed: number,
  options: { baseRps: number; multiplier?: number; eventMinutes?: number },
): PrewarmScenario {
  const multiplier = options.multiplier ?? 5;
  const start = Date.UTC(2024, 0, 3, 20);
  const end = start + (options.eventMinutes ?? 60) * MINUTE;
  const trace = syntheticTrace({
    days: 3,
    seed,
    baseRps: 10,
    mix: BASE_MIX,
    events: [{ startMs: start, endMs: end, multiplier, mix: EVENT_MIX }],
  });
  const base = trace.rateAt(start - 1); // the shape just before the event
  return {
    trace,
    start,
    end,
    multiplier,
    scale: options.baseRps / base,
    rpsAt: (t) => (trace.rateAt(t) / base) * options.baseRps,
    mixAt: (t) => trace.mixAt(t),
  };
}

/** One pre-encoded request. */
export interface EncodedRequest {
  body: Uint8Array<ArrayBuffer>;
  headers: Record<string, string>;
  rows: number;
}

/** `count` binary requests of `rows` demo tokens per request type. */
export function prepareRequests(
  traffic: DemoTraffic,
  manifest: ModelManifest,
  options: { rows: number; count?: number; seed: number },
): Record<string, EncodedRequest[]> {
  return Object.fromEntries(traffic.request_types.map((type, t) => {
    const random = createRandom(options.seed * 31 + t);
    return [
      type,
      Array.from({ length: options.count ?? 32 }, () => {
        const tokens = demoTokens(traffic, type, options.rows, random);
        const { body, headerLength } = encodeInferRequest(tokens, manifest.d_model, {
          requestType: type,
          binaryInput: true,
          binaryOutputs: true,
        });
        return {
          body,
          rows: options.rows,
          headers: {
            "content-type": "application/octet-stream",
            "inference-header-content-length": String(headerLength),
          },
        };
      }),
    ];
  }));
}

/** Expert selections per type (`[layer][expert]` per token), measured through the router. */
export async function measureAffinity(
  url: string,
  manifest: ModelManifest,
  traffic: DemoTraffic,
): Promise<Record<string, number[][]>> {
  const random = createRandom(99);
  const result: Record<string, number[][]> = {};
  for (const type of traffic.request_types) {
    const counts = Array.from(
      { length: manifest.layers },
      () => new Array(manifest.experts).fill(0),
    );
    const rows = 64;
    const { body } = encodeInferRequest(demoTokens(traffic, type, rows, random), manifest.d_model, {
      requestType: type,
      outputs: ["expert_ids"],
    });
    const response = await fetch(`${url}/v2/models/${manifest.name}/infer`, {
      method: "POST",
      body,
    });
    const answer = await response.json();
    const ids = answer.outputs.find((o: { name: string }) => o.name === "expert_ids").data;
    ids.forEach((expert: number, i: number) => {
      const layer = Math.floor(i / (rows * manifest.top_k));
      counts[layer]![expert]! += 1 / rows;
    });
    result[type] = counts;
  }
  return result;
}

/**
 * Writes the trace's buckets in `[from, to)` into `store` as tokens of `rows`-row requests
 * (affinity for the last 6 hours before `affinityFrom`'s day ends, as a router records it).
 */
export async function writeBuckets(
  store: TrafficStore,
  scenario: PrewarmScenario,
  options: {
    model: string;
    rows: number;
    affinity: Record<string, number[][]>;
    from: number;
    to: number;
    affinityFrom: number;
  },
): Promise<void> {
  for (const bucket of scenario.trace.buckets) {
    if (bucket.at < options.from || bucket.at >= options.to) continue;
    const model = emptyModelBucket();
    for (const [type, count] of Object.entries(bucket.byType)) {
      // In the replay's units: what a router recording the replayed traffic would hold.
      const requests = count * scenario.scale;
      const tokens = requests * options.rows;
      model.volume.requests += requests;
      model.volume.tokens += tokens;
      model.volume.types[type] = { requests, tokens };
      const profile = options.affinity[type];
      if (bucket.at >= options.affinityFrom && profile !== undefined) {
        const layers = new Map<number, number[]>();
        profile.forEach((row, l) => layers.set(l, row.map((v) => v * tokens)));
        model.affinity.set(type, layers);
      }
    }
    await store.write(options.model, bucket.at, model);
  }
}

/** The first simulated day's start of `scenario`'s trace. */
export function traceStart(scenario: PrewarmScenario): number {
  return scenario.start - 2 * DAY - 20 * HOUR;
}
