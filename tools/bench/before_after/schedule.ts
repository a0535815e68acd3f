/**
 * @module The before/after workload's shape over time: a compressed day (offered rate
 * rising and falling around its mean, request-type mix shifting from the first half of
 * the day to the second) with one spike segment (twice the mean rate and yet another
 * mix, like a promotion). Pure; both configurations replay the same schedule.
 */

/** One constant-rate stretch of the schedule. */
export interface Segment {
  startS: number;
  durationS: number;
  /** Offered rate ÷ the mean rate. */
  rateMultiplier: number;
  /** Request-type ranking rotated by this many places (0 = the model's own order). */
  mixShift: number;
  label: string;
}

/** Options of {@linkcode diurnalSchedule}. */
export interface ScheduleOptions {
  /** Segments per compressed day (default 8). */
  segments?: number;
  /** Index of the spike segment (default 5 of 8: the evening). */
  spikeSegment?: number;
  /** Rate multiplier of the spike segment (default 2). */
  spikeMultiplier?: number;
  /** Relative amplitude of the daily swing (default 0.3: 0.7× … 1.3× the mean). */
  amplitude?: number;
}

/** The schedule for a compressed day of `totalS` seconds. */
export function diurnalSchedule(totalS: number, options: ScheduleOptions = {}): Segment[] {
  const n = options.segments ?? 8;
  const spike = options.spikeSegment ?? 5;
  const amplitude = options.amplitude ?? 0.3;
  if (!(totalS > 0) || n < 1) throw new RangeError("Cannot build schedule: need totalS > 0");
  const durationS = totalS / n;
  return Array.from({ length: n }, (_, i) => {
    const isSpike = i === spike;
    // Night at the start, peak mid-day: 1 − a·cos(2π·(i + ½)/n).
    const day = 1 - amplitude * Math.cos((2 * Math.PI * (i + 0.5)) / n);
    return {
      startS: i * durationS,
      durationS,
      rateMultiplier: isSpike ? (options.spikeMultiplier ?? 2) : day,
      mixShift: isSpike ? 3 : i < n / 2 ? 0 : 1,
      label: isSpike ? "spike" : i < n / 2 ? "morning" : "evening",
    };
  });
}

/** `items` rotated left by `shift` places. */
export function rotate<T>(items: readonly T[], shift: number): T[] {
  if (items.length === 0) return [];
  const k = ((shift % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
