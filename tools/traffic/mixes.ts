/**
 * @module The named traffic scenarios of `deno task traffic`: at each moment of a run,
 * how fast requests arrive (a factor on `--rate`) and how the request types are drawn —
 * a Zipf law (`zipfRequestTypes` in `tools/model/traffic.ts`) over the model's types,
 * ranked from a given first type. Pure functions of time, so a test checks them without
 * sending anything.
 *
 * - `steady`: every request type equally often (Zipf s = 0), constant rate.
 * - `skewed`: Zipf s = 1.5 in the model's order (with six types the first gets ~55 %),
 *   constant rate — the first type's preferred experts go hot.
 * - `shift`: skewed, but the ranking rotates by one type every `shiftEveryS` (default a
 *   quarter of the run) — the hot experts move.
 * - `spike`: steady, with a burst at 5× the rate for the middle fifth of the run
 *   (40–60 %) whose mix is skewed towards the *last* type: the event has its own mix.
 */
import type { Random } from "../model/prng.ts";
import { zipfRequestTypes } from "../model/traffic.ts";

/** Names accepted by `--mix`. */
export const MIX_NAMES = ["steady", "skewed", "shift", "spike"] as const;

/** A scenario name. */
export type MixName = (typeof MIX_NAMES)[number];

/** Zipf exponent of the skewed mixes. */
export const SKEW_EXPONENT = 1.5;
/** Rate factor of the spike. */
export const SPIKE_FACTOR = 5;

/** The scenario at one moment. */
export interface MixMoment {
  /** Factor on the base rate. */
  rateFactor: number;
  /** Zipf exponent over request types (0 = uniform). */
  zipf: number;
  /** Index of the most frequent type; the ranking continues from it, wrapping. */
  first: number;
  /** Short label for the progress line, e.g. `skewed` or `spike 5×`. */
  label: string;
}

/** Options of {@linkcode mixAt}. */
export interface MixOptions {
  /** Number of request types. */
  types: number;
  durationS: number;
  /** Rotation period of `shift` (default `durationS / 4`). */
  shiftEveryS?: number;
}

/** The scenario `name` at `tSeconds` into the run. */
export function mixAt(name: MixName, tSeconds: number, options: MixOptions): MixMoment {
  const n = options.types;
  if (!(n >= 1)) throw new RangeError(`Cannot build a traffic mix: need a request type, got ${n}`);
  switch (name) {
    case "steady":
      return { rateFactor: 1, zipf: 0, first: 0, label: "steady" };
    case "skewed":
      return { rateFactor: 1, zipf: SKEW_EXPONENT, first: 0, label: "skewed" };
    case "shift": {
      const every = options.shiftEveryS ?? options.durationS / 4;
      const step = every > 0 ? Math.floor(tSeconds / every) : 0;
      return { rateFactor: 1, zipf: SKEW_EXPONENT, first: step % n, label: `shift ${step + 1}` };
    }
    case "spike": {
      const inSpike = tSeconds >= 0.4 * options.durationS && tSeconds < 0.6 * options.durationS;
      return inSpike
        ? { rateFactor: SPIKE_FACTOR, zipf: SKEW_EXPONENT, first: n - 1, label: "spike 5×" }
        : { rateFactor: 1, zipf: 0, first: 0, label: "steady" };
    }
  }
}

/** `types` ranked from index `first`, wrapping: the order a {@linkcode MixMoment} draws in. */
export function rankedFrom<T>(types: readonly T[], first: number): T[] {
  return types.map((_, i) => types[(first + i) % types.length]!);
}

/**
 * A sampler of request types following a scenario over time: one Zipf sampler per
 * distinct moment (at most a few per run), built on first use.
 */
export function mixSampler(
  name: MixName,
  types: readonly string[],
  options: Omit<MixOptions, "types"> & { random: Random },
): (tSeconds: number) => { type: string; moment: MixMoment } {
  const samplers = new Map<string, () => string>();
  return (tSeconds) => {
    const moment = mixAt(name, tSeconds, { ...options, types: types.length });
    const key = `${moment.zipf}:${moment.first}`;
    let sample = samplers.get(key);
    if (sample === undefined) {
      sample = zipfRequestTypes(rankedFrom(types, moment.first), moment.zipf, options.random);
      samplers.set(key, sample);
    }
    return { type: sample(), moment };
  };
}
