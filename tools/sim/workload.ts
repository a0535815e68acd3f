/**
 * @module The simulator's synthetic workload: request types with per-layer expert
 * popularity that drifts over the day, a diurnal arrival rate, request-type mix shifts, a
 * scheduled event with its own mix and a hot-expert storm.
 *
 * Gate. A type's popularity over a layer's experts is Zipf over a random permutation of
 * the experts; a token's gate logits are `log popularity + Gumbel noise`, routed by the
 * PRODUCTION gate (`routeTokens`: top-k, group limit, scoring family). A type's affinity —
 * expert rows per token, summing to top-k per layer — is the mean over `gateTokens`
 * sampled tokens. Drift: the permutation of epoch k+1 is epoch k's with a fraction of
 * experts swapped; affinity interpolates linearly between epochs.
 */
import type { GateOptions } from "../../gpu-backend/moe/gate_options.ts";
import { routeTokens } from "../../gpu-backend/moe/routing.ts";
import { createRandom, deriveSeed, type Random } from "../model/prng.ts";

/** The gate shape the workload routes with. */
export interface ModelShapeSim {
  layers: number;
  experts: number;
  topK: number;
  groups: number;
  topkGroup: number;
}

/** Knobs of the popularity model (all assumed). */
export interface PopularityOptions {
  seed: number;
  types: readonly string[];
  /** Zipf exponent of popularity over a type's expert ranking. */
  zipf: number;
  /** Drift epochs over the day (affinity interpolates between them). */
  epochs: number;
  /** Fraction of experts swapped in the ranking from one epoch to the next. */
  driftSwap: number;
  /** Tokens sampled per (type, epoch, layer) to estimate the affinity. */
  gateTokens: number;
  /** Types whose popularity is a storm: `stormExperts` experts take `stormShare` of it. */
  stormTypes?: readonly string[];
  stormExperts?: number;
  stormShare?: number;
}

/** `[type][epoch][layer][expert]` expert rows per token. */
export type AffinityTable = number[][][][];

/** Expert rows per token for every type and drift epoch, from the production gate. */
export function buildAffinity(shape: ModelShapeSim, options: PopularityOptions): AffinityTable {
  const gate: GateOptions = {
    topK: shape.topK,
    groups: shape.groups,
    topkGroup: shape.topkGroup,
    temperature: 1,
    scoring: "sigmoid",
    groupScore: shape.groups > 1 ? "sum_top2" : "max",
  };
  return options.types.map((type, t) => {
    const random = createRandom(deriveSeed(options.seed, 17, t));
    const storm = options.stormTypes?.includes(type) ?? false;
    const rankings = Array.from({ length: shape.layers }, () => shuffled(shape.experts, random));
    const epochs: number[][][] = [];
    for (let k = 0; k < options.epochs; k++) {
      if (k > 0) { for (const ranking of rankings) drift(ranking, options.driftSwap, random); }
      epochs.push(rankings.map((ranking) => {
        const popularity = zipfPopularity(ranking, options.zipf, storm ? options : undefined);
        return sampleAffinity(popularity, shape, gate, options.gateTokens, random);
      }));
    }
    return epochs;
  });
}

/** Popularity of each expert: Zipf by rank, optionally with a storm on the top experts. */
function zipfPopularity(
  ranking: readonly number[],
  zipf: number,
  storm: PopularityOptions | undefined,
): Float64Array {
  const popularity = new Float64Array(ranking.length);
  ranking.forEach((expert, rank) => popularity[expert] = 1 / (rank + 1) ** zipf);
  normalise(popularity);
  if (storm !== undefined) {
    const hot = storm.stormExperts ?? 4;
    const share = storm.stormShare ?? 0.5;
    for (let i = 0; i < popularity.length; i++) popularity[i]! *= 1 - share;
    for (let rank = 0; rank < hot; rank++) popularity[ranking[rank]!]! += share / hot;
  }
  return popularity;
}

function sampleAffinity(
  popularity: Float64Array,
  shape: ModelShapeSim,
  gate: GateOptions,
  tokens: number,
  random: Random,
): number[] {
  const { experts } = shape;
  const logits = new Float32Array(tokens * experts);
  for (let row = 0; row < tokens; row++) {
    for (let e = 0; e < experts; e++) {
      const gumbel = -Math.log(-Math.log(1 - random() * (1 - 1e-12)));
      logits[row * experts + e] = Math.log(popularity[e]! + 1e-12) + gumbel;
    }
  }
  const routing = routeTokens(logits, tokens, experts, gate);
  const affinity = new Array<number>(experts).fill(0);
  for (const expert of routing.experts) affinity[expert]! += 1 / tokens;
  return affinity;
}

function shuffled(n: number, random: Random): number[] {
  const values = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  return values;
}

function drift(ranking: number[], fraction: number, random: Random): void {
  const swaps = Math.round(fraction * ranking.length);
  for (let s = 0; s < swaps; s++) {
    const i = Math.floor(random() * ranking.length);
    const j = Math.floor(random() * ranking.length);
    [ranking[i], ranking[j]] = [ranking[j]!, ranking[i]!];
  }
}

function normalise(values: Float64Array): void {
  let total = 0;
  for (const v of values) total += v;
  for (let i = 0; i < values.length; i++) values[i]! /= total;
}

/** One phase of the day: from `startH` on, this mix (shares by type). */
export interface MixPhase {
  startH: number;
  mix: Record<string, number>;
}

/** A scheduled burst of traffic with its own mix. */
export interface DayEvent {
  name: string;
  startH: number;
  endH: number;
  /** Rate multiplier while active. */
  multiplier: number;
  /** Mix while active (replaces the phase mix), or blended with `share`. */
  mix: Record<string, number>;
  /** Fraction of traffic that follows `mix` (1: all of it). */
  share: number;
  /** Whether the pre-warm job is told about it in advance (scheduled events are). */
  scheduled: boolean;
}

/** A compressed day: rate curve, mix phases, events. Times in day-hours. */
export interface DayScenario {
  name: string;
  description: string;
  /** Rate multiplier at day-hour h (peak 1). */
  diurnal: boolean;
  phases: readonly MixPhase[];
  events: readonly DayEvent[];
}

/** Request types of the synthetic workload. */
export const SIM_TYPES = ["chat", "code", "math", "docs", "storm"] as const;

const MORNING = { chat: 0.5, code: 0.2, math: 0.1, docs: 0.2 };
const DAYTIME = { chat: 0.2, code: 0.5, math: 0.15, docs: 0.15 };
const EVENING = { chat: 0.35, code: 0.15, math: 0.1, docs: 0.4 };
const EVENT: DayEvent = {
  name: "launch",
  startH: 20,
  endH: 21,
  multiplier: 5,
  mix: { math: 0.7, chat: 0.3 },
  share: 1,
  scheduled: true,
};
const STORM: DayEvent = {
  name: "storm",
  startH: 13,
  endH: 14,
  multiplier: 1,
  mix: { storm: 1 },
  share: 0.4,
  scheduled: false,
};
const SHIFTS: MixPhase[] = [
  { startH: 0, mix: MORNING },
  { startH: 9, mix: DAYTIME },
  { startH: 18, mix: EVENING },
];

/** The scenarios `deno task sim --scenario` knows. */
export const SCENARIOS: Record<string, DayScenario> = {
  diurnal: {
    name: "diurnal",
    description: "diurnal rate (0.5–1× peak), one mix, popularity drift",
    diurnal: true,
    phases: [{ startH: 0, mix: MORNING }],
    events: [],
  },
  "mix-shift": {
    name: "mix-shift",
    description: "diurnal + request-type mix shifts at 09:00 and 18:00",
    diurnal: true,
    phases: SHIFTS,
    events: [],
  },
  event: {
    name: "event",
    description: "diurnal + scheduled 5× event 20:00–21:00 with its own mix (70 % math)",
    diurnal: true,
    phases: [{ startH: 0, mix: MORNING }],
    events: [EVENT],
  },
  storm: {
    name: "storm",
    description: "diurnal + unscheduled hot-expert storm 13:00–14:00 (40 % of traffic, " +
      "half its expert rows on 4 experts per layer)",
    diurnal: true,
    phases: [{ startH: 0, mix: MORNING }],
    events: [STORM],
  },
  day: {
    name: "day",
    description: "all of it: diurnal, mix shifts, storm 13:00–14:00, 5× event 20:00–21:00",
    diurnal: true,
    phases: SHIFTS,
    events: [STORM, EVENT],
  },
};

/** Rate multiplier at day-hour `h`: 0.5 at 03:00, 1 at 15:00, times active events. */
export function rateAt(scenario: DayScenario, h: number): number {
  const base = scenario.diurnal ? 0.75 - 0.25 * Math.cos((2 * Math.PI * (h - 3)) / 24) : 1;
  const boost = scenario.events.reduce(
    (m, e) => (h >= e.startH && h < e.endH ? Math.max(m, e.multiplier) : m),
    1,
  );
  return base * boost;
}

/** Type shares at day-hour `h` (sum 1). */
export function mixAt(scenario: DayScenario, h: number): Record<string, number> {
  let mix: Record<string, number> = {};
  for (const phase of scenario.phases) if (h >= phase.startH) mix = { ...phase.mix };
  for (const e of scenario.events) {
    if (h < e.startH || h >= e.endH) continue;
    const blended: Record<string, number> = {};
    for (const [type, share] of Object.entries(mix)) blended[type] = share * (1 - e.share);
    for (const [type, share] of Object.entries(e.mix)) {
      blended[type] = (blended[type] ?? 0) + share * e.share;
    }
    mix = blended;
  }
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  return Object.fromEntries(Object.entries(mix).map(([k, v]) => [k, v / total]));
}
