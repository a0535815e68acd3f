/**
 * @module The before/after's phases and the shape of its workload over time, pure. Every
 * configuration runs the same phases on a fresh pool:
 *
 * 1. warm-up (closed loop, excluded from every result, until the plan has settled; EPLB
 *    plans on its load at the end);
 * 2. idle (one client, back to back: latency without queueing);
 * 3. saturation (closed loop: the capacity, its first seconds excluded);
 * 4. rate sweep (open loop at fractions of the static baseline's capacity, one mix);
 * 5. shift (open loop for one compressed hour, the request-type mix — and with it the hot
 *    experts — changing `shifts` times).
 *
 * The shift phase is one hour of load compressed into `shiftS` seconds, so DeepSeek's
 * "re-plan every 10 minutes" is every `shiftS / 6` seconds of this run.
 */

/** Phase durations and rates of one run. */
export interface PhasePlan {
  /** Shortest warm-up. */
  warmS: number;
  /** The warm-up goes on until the plan has not changed for this long… */
  settleS: number;
  /** …but never past this. */
  maxWarmS: number;
  idleS: number;
  /** Seconds of the saturation phase measured, after `rampS` excluded (clients starting). */
  saturationS: number;
  rampS: number;
  /** Seconds per rate of the sweep. */
  sweepS: number;
  /** Offered rates of the sweep as fractions of the static baseline's capacity. */
  rates: readonly number[];
  /** Length of the shift phase: one compressed hour. */
  shiftS: number;
  /** Offered rate of the shift phase, as a fraction of the static baseline's capacity. */
  shiftRate: number;
  /** How many times the mix changes during the shift phase (≥ 1). */
  shifts: number;
}

/** One constant-mix stretch of the shift phase. */
export interface MixSegment {
  startS: number;
  durationS: number;
  /** Request-type ranking rotated by this many places (0 = the model's own order). */
  mix: number;
}

/** The shift phase cut into `shifts + 1` equal stretches, mixes 0, 1, 2, …. */
export function mixSegments(plan: Pick<PhasePlan, "shiftS" | "shifts">): MixSegment[] {
  const { shiftS, shifts } = plan;
  if (!(shiftS > 0) || !Number.isInteger(shifts) || shifts < 1) {
    throw new RangeError(
      `Cannot cut the shift phase: need shiftS > 0 and an integer shifts ≥ 1, got ${shiftS}, ${shifts}`,
    );
  }
  const durationS = shiftS / (shifts + 1);
  return Array.from({ length: shifts + 1 }, (_, mix) => ({
    startS: mix * durationS,
    durationS,
    mix,
  }));
}

/** The mix in force `tS` seconds into the shift phase. */
export function mixAt(segments: readonly MixSegment[], tS: number): number {
  let mix = segments[0]?.mix ?? 0;
  for (const segment of segments) if (tS >= segment.startS) mix = segment.mix;
  return mix;
}

/** Seconds of this run per hour of load: the shift phase is one compressed hour. */
export function compression(plan: Pick<PhasePlan, "shiftS">): number {
  return 3600 / plan.shiftS;
}

/** DeepSeek's EPLB period (10 minutes of load) in seconds of this run. */
export function eplbPeriodS(plan: Pick<PhasePlan, "shiftS">): number {
  return (10 * 60) / compression(plan);
}

/** Wall seconds of one run's load phases at the shortest warm-up (start-up and drains not counted). */
export function loadSeconds(plan: PhasePlan): number {
  return plan.warmS + plan.idleS + plan.rampS + plan.saturationS +
    plan.sweepS * plan.rates.length +
    plan.shiftS;
}

/** `items` rotated left by `shift` places. */
export function rotate<T>(items: readonly T[], shift: number): T[] {
  if (items.length === 0) return [];
  const k = ((shift % items.length) + items.length) % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}
