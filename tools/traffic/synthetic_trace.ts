/**
 * @module A synthetic traffic trace: a diurnal request rate with noise, scheduled events
 * that multiply the rate and shift the request-type mix. Reproducible (seeded). Used by
 * `deno task forecast:backtest --synthetic`, the forecast tests and the pre-warm
 * benchmark, which replays `rateAt`/`mixAt` in compressed time.
 *
 * Rate at simulated time t (requests/s): `baseRps · shape(hour(t)) · Π multipliers`, with
 * `shape(h) = 1 + a·cos(2π(h − peakHour)/24) + a/4·cos(4π(h − peakHour)/24)` — a daily
 * peak, a trough at night and a shoulder. Bucket counts are Poisson-like: the expected
 * count plus Gaussian noise of standard deviation `noise · √count`.
 */
import { createRandom } from "../model/prng.ts";

/** A scheduled event in the trace (times in simulated ms). */
export interface TraceEvent {
  startMs: number;
  endMs: number;
  multiplier: number;
  /** Request-type shares during the event; default the base mix. */
  mix?: Record<string, number>;
}

/** Options of {@linkcode syntheticTrace}. */
export interface SyntheticTraceOptions {
  /** Simulated start (ms); default 2024-01-01T00:00:00Z. */
  startMs?: number;
  /** Days simulated; default 3. */
  days?: number;
  /** Bucket width in simulated ms; default 60 000. */
  bucketMs?: number;
  /** Mean request rate (requests per simulated second); default 10. */
  baseRps?: number;
  /** Diurnal amplitude in [0, 1); default 0.6. */
  amplitude?: number;
  /** Hour of the daily peak; default 14. */
  peakHour?: number;
  /** Noise factor (1 = Poisson-like); default 1. */
  noise?: number;
  /** Request-type shares outside events; default chat 0.6, code 0.3, summarise 0.1. */
  mix?: Record<string, number>;
  /** Default: one 5× event on the last day, 20:00–21:00, shifting the mix towards code. */
  events?: TraceEvent[];
  /** Seed of the noise; default 1. */
  seed?: number;
}

/** One bucket of the trace. */
export interface TraceBucket {
  at: number;
  requests: number;
  /** Requests per type (rounded shares of `requests`). */
  byType: Record<string, number>;
}

/** A generated trace. */
export interface SyntheticTrace {
  startMs: number;
  bucketMs: number;
  /** Buckets per day. */
  seasonLength: number;
  events: TraceEvent[];
  /** Expected requests/s at simulated time `ms` (no noise). */
  rateAt(ms: number): number;
  /** Request-type shares at simulated time `ms`. */
  mixAt(ms: number): Record<string, number>;
  buckets: TraceBucket[];
}

const DAY = 86_400_000;

/** A standard normal draw (Box–Muller) from `random`. */
function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** Generates a trace; see the module doc. */
export function syntheticTrace(options: SyntheticTraceOptions = {}): SyntheticTrace {
  const startMs = options.startMs ?? Date.UTC(2024, 0, 1);
  const days = options.days ?? 3;
  const bucketMs = options.bucketMs ?? 60_000;
  const baseRps = options.baseRps ?? 10;
  const a = options.amplitude ?? 0.6;
  const peakHour = options.peakHour ?? 14;
  const noise = options.noise ?? 1;
  const baseMix = options.mix ?? { chat: 0.6, code: 0.3, summarise: 0.1 };
  const lastDay = startMs + (days - 1) * DAY;
  const events = options.events ?? [{
    startMs: lastDay + 20 * 3_600_000,
    endMs: lastDay + 21 * 3_600_000,
    multiplier: 5,
    mix: { chat: 0.2, code: 0.7, summarise: 0.1 },
  }];
  const activeAt = (ms: number) => events.filter((e) => e.startMs <= ms && ms < e.endMs);
  const rateAt = (ms: number) => {
    const hour = (((ms - startMs) % DAY) + DAY) % DAY / 3_600_000;
    const phase = (2 * Math.PI * (hour - peakHour)) / 24;
    const shape = 1 + a * Math.cos(phase) + (a / 4) * Math.cos(2 * phase);
    return activeAt(ms).reduce((rate, e) => rate * e.multiplier, baseRps * shape);
  };
  const mixAt = (ms: number) => activeAt(ms).findLast((e) => e.mix !== undefined)?.mix ?? baseMix;
  const random = createRandom(options.seed ?? 1);
  const buckets: TraceBucket[] = [];
  const count = Math.round((days * DAY) / bucketMs);
  for (let i = 0; i < count; i++) {
    const at = startMs + i * bucketMs;
    const expected = (rateAt(at + bucketMs / 2) * bucketMs) / 1000;
    const requests = Math.max(
      0,
      Math.round(expected + noise * Math.sqrt(expected) * gaussian(random)),
    );
    const byType: Record<string, number> = {};
    for (const [type, share] of Object.entries(mixAt(at))) {
      byType[type] = Math.round(requests * share);
    }
    buckets.push({ at, requests, byType });
  }
  return {
    startMs,
    bucketMs,
    seasonLength: Math.round(DAY / bucketMs),
    events,
    rateAt,
    mixAt,
    buckets,
  };
}
