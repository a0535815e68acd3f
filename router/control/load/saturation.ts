/**
 * @module The load signal: how close a backend is to what it can serve, from four
 * measured ratios, and what that says about capacity and scaling. Pure.
 *
 * Per backend, over one load-report interval:
 * - `deviceBusy` — executor busy time ÷ slot time (`utilisation`);
 * - `hostBusy` — event-loop lateness ÷ time (the main thread: HTTP, decoding, routing,
 *   batching, and onnxruntime itself with `backend.executors: 0`);
 * - `queueShare = w ÷ (w + s)` — `w` the mean wait of a group in a batching queue beyond
 *   the batching window, `s` the mean execution time. For an M/M/1 queue
 *   `w = ρ/(1−ρ)·s`, so `w/(w+s) = ρ`: the utilisation of whatever the queue waits for,
 *   device or host;
 * - `shedShare = shed ÷ (admitted + shed)` — requests refused with 503 by admission.
 *
 * **saturation = max(deviceBusy, hostBusy, queueShare)**, and while anything is shed
 * **at least 0.9 + 0.1 · shedShare** (a backend that refuses work is saturated whatever
 * the ratios say). In [0, 1]; {@linkcode SATURATED} = 0.9. `bottleneck` names the term
 * that set it.
 *
 * **Capacity** (tokens/s one backend serves): measured, not extrapolated from busy
 * time. A backend at saturation ≥ 0.9 serves what it can: its tokens/s *is* the capacity
 * (`measured`), and is remembered ({@linkcode rememberCapacity}). Below that, tokens/s ÷
 * saturation (`extrapolated`, only at saturation ≥ 0.05), never above a remembered
 * measurement of the same backend. Tokens ÷ executor busy ratio is not used: with the
 * host saturated it overestimated capacity six-fold.
 *
 * **Router shedding.** A router that refuses work itself (429 `router_full` /
 * `backends_full`: its admission found the pool at its in-flight limits) keeps the
 * backends from ever seeing the overload; the pool is saturated all the same. So the
 * pool's saturation (mean of fresh backends) is at least `0.9 + 0.1 · share` while the
 * router sheds (share = shed ÷ (shed + admitted), {@linkcode poolSaturation}), and the
 * router's shed work counts as demand in the scaling rule.
 *
 * **Scaling advice** in backend-equivalents of demand, `D = Σ saturation ·
 * (1 + shed/admitted)` over fresh backends (shed work is demand too): scale up to
 * `ceil(D ÷ target)` when that exceeds the pool (always at least one more while the pool
 * saturation is ≥ 0.9); scale down only while no backend sheds and `D ÷ (n − 1) ≤ 0.5`
 * (the pool would still run at half load or less), to `max(1, ceil(D ÷ 0.5))`; otherwise
 * no change.
 */

/** A backend at or above this saturation is saturated. */
export const SATURATED = 0.9;
/** Below this saturation a capacity extrapolation is noise. */
export const MIN_SATURATION_FOR_CAPACITY = 0.05;
/** Scale down only while the remaining backends would run at or below this saturation. */
export const SCALE_DOWN_BELOW = 0.5;

/** The measured ratios of one backend. */
export interface SaturationInputs {
  /** Executor busy ratio in [0, 1]. */
  deviceBusy: number;
  /** Main-thread busy ratio in [0, 1]; `undefined` from a backend that does not report it. */
  hostBusy: number | undefined;
  /** Mean queue wait per group beyond the batching window (ms). */
  queueWaitMs: number | undefined;
  /** Mean execution time (ms). */
  serviceMs: number | undefined;
  /** Requests admitted per second. */
  admittedPerS: number;
  /** Requests refused (503) per second. */
  shedPerS: number;
}

/** Which term set the saturation. */
export type Bottleneck = "device" | "host" | "queue" | "shedding";

/** A backend's saturation and its terms. */
export interface Saturation {
  value: number;
  bottleneck: Bottleneck;
  deviceBusy: number;
  hostBusy: number | undefined;
  queueShare: number | undefined;
  shedShare: number;
}

function unit(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}

/** `w ÷ (w + s)`; `undefined` when neither is known or both are 0. */
export function queueShare(waitMs: number | undefined, serviceMs: number | undefined) {
  const w = Math.max(0, waitMs ?? 0);
  const s = Math.max(0, serviceMs ?? 0);
  if (!(w + s > 0)) return undefined;
  return w / (w + s);
}

/** The saturation formula of the module doc. */
export function saturationOf(inputs: SaturationInputs): Saturation {
  const deviceBusy = unit(inputs.deviceBusy);
  const hostBusy = inputs.hostBusy === undefined ? undefined : unit(inputs.hostBusy);
  const queue = queueShare(inputs.queueWaitMs, inputs.serviceMs);
  const admitted = Math.max(0, inputs.admittedPerS || 0);
  const shed = Math.max(0, inputs.shedPerS || 0);
  const shedShare = shed > 0 ? shed / (admitted + shed) : 0;
  const terms: [Bottleneck, number][] = [
    ["device", deviceBusy],
    ["host", hostBusy ?? 0],
    ["queue", queue ?? 0],
  ];
  let [bottleneck, value] = terms[0]!;
  for (const [name, term] of terms) if (term > value) [bottleneck, value] = [name, term];
  if (shed > 0) {
    const floor = SATURATED + 0.1 * shedShare;
    if (floor > value) [bottleneck, value] = ["shedding", floor];
  }
  return { value: unit(value), bottleneck, deviceBusy, hostBusy, queueShare: queue, shedShare };
}

/** Remembered capacity measurements at saturation: backend id → tokens/s and when. */
export type CapacityMemory = ReadonlyMap<string, { tokensPerS: number; at: number }>;

/** What capacity is estimated from, per backend. */
export interface CapacitySample {
  id: string;
  saturation: number | undefined;
  tokensPerS: number | undefined;
}

/** One backend's capacity estimate. */
export interface CapacityEstimate {
  tokensPerS: number;
  source: "measured" | "extrapolated" | "remembered";
}

/** Capacity of one backend (module doc); `undefined` when nothing allows an estimate. */
export function backendCapacity(
  sample: CapacitySample,
  memory: CapacityMemory,
): CapacityEstimate | undefined {
  const { saturation, tokensPerS } = sample;
  const remembered = memory.get(sample.id)?.tokensPerS;
  if (saturation !== undefined && tokensPerS !== undefined && tokensPerS > 0) {
    if (saturation >= SATURATED) return { tokensPerS, source: "measured" };
    if (saturation >= MIN_SATURATION_FOR_CAPACITY) {
      const extrapolated = tokensPerS / saturation;
      return remembered !== undefined && remembered < extrapolated
        ? { tokensPerS: remembered, source: "remembered" }
        : { tokensPerS: extrapolated, source: "extrapolated" };
    }
  }
  return remembered === undefined ? undefined : { tokensPerS: remembered, source: "remembered" };
}

/**
 * The memory after one round: saturated backends' tokens/s replace their entry (the
 * latest measurement wins: the model, plan or mix may have changed); entries older
 * than `maxAgeMs` are dropped.
 */
export function rememberCapacity(
  memory: CapacityMemory,
  samples: readonly CapacitySample[],
  now: number,
  maxAgeMs: number,
): CapacityMemory {
  const next = new Map([...memory].filter(([, entry]) => now - entry.at <= maxAgeMs));
  for (const { id, saturation, tokensPerS } of samples) {
    if (saturation !== undefined && saturation >= SATURATED && tokensPerS && tokensPerS > 0) {
      next.set(id, { tokensPerS, at: now });
    }
  }
  return next;
}

/** Median of per-backend capacities; `undefined` when none. */
export function poolCapacityPerBackend(estimates: readonly (CapacityEstimate | undefined)[]) {
  const values = estimates.flatMap((e) => e ? [e.tokensPerS] : []).sort((a, b) => a - b);
  if (values.length === 0) return undefined;
  const mid = Math.floor(values.length / 2);
  return values.length % 2 === 1 ? values[mid]! : (values[mid - 1]! + values[mid]!) / 2;
}

/** One fresh backend in the scaling rule. */
export interface ScaleSample {
  saturation: number;
  admittedPerS: number;
  shedPerS: number;
}

/** What the scaling rule advises. */
export interface ScaleAdvice {
  backends: number;
  recommended: number;
  /** Demand in backend-equivalents (module doc). */
  demand: number;
  direction: "up" | "down" | "none";
  reason: string;
}

/**
 * The pool's saturation: the mean of fresh backends' saturations, at least
 * `0.9 + 0.1 · share` while the router itself sheds; `undefined` without backends.
 */
export function poolSaturation(
  saturations: readonly number[],
  router: { shedPerS: number; admittedPerS: number } = { shedPerS: 0, admittedPerS: 0 },
): number | undefined {
  if (saturations.length === 0) return undefined;
  const mean = saturations.reduce((a, b) => a + unit(b), 0) / saturations.length;
  const shed = Math.max(0, router.shedPerS || 0);
  if (!(shed > 0)) return mean;
  const share = shed / (shed + Math.max(0, router.admittedPerS || 0));
  return Math.max(mean, SATURATED + 0.1 * share);
}

/** The scaling rule of the module doc; `target` = utilisation to scale for (e.g. 0.8). */
export function scaleAdvice(
  samples: readonly ScaleSample[],
  options: {
    target: number;
    maxBackends: number;
    /** Requests the router itself shed and admitted per second. */
    router?: { shedPerS: number; admittedPerS: number };
  },
): ScaleAdvice {
  const n = samples.length;
  const routerShed = Math.max(0, options.router?.shedPerS ?? 0);
  const routerAdmitted = Math.max(0, options.router?.admittedPerS ?? 0);
  const routerExtra = routerShed > 0 ? (routerAdmitted > 0 ? routerShed / routerAdmitted : 1) : 0;
  const demand = samples.reduce((sum, s) => {
    const admitted = Math.max(0, s.admittedPerS);
    const shed = Math.max(0, s.shedPerS);
    const extra = shed > 0 ? (admitted > 0 ? shed / admitted : 1) : 0;
    return sum + Math.max(unit(s.saturation), routerShed > 0 ? SATURATED : 0) *
        (1 + extra + routerExtra);
  }, 0);
  const d = demand.toFixed(2);
  if (n === 0) {
    return { backends: 0, recommended: 0, demand, direction: "none", reason: "no backend reports" };
  }
  const mean = poolSaturation(samples.map((s) => s.saturation), {
    shedPerS: routerShed,
    admittedPerS: routerAdmitted,
  })!;
  const clamp = (k: number) => Math.min(Math.max(1, k), Math.max(options.maxBackends, n));
  let up = Math.ceil(demand / options.target - 1e-9);
  if (mean >= SATURATED) up = Math.max(up, n + 1);
  if (clamp(up) > n) {
    return {
      backends: n,
      recommended: clamp(up),
      demand,
      direction: "up",
      reason: `demand ${d} backend-equivalents (pool saturation ${mean.toFixed(2)}) needs ` +
        `${clamp(up)} backends at ${options.target} each`,
    };
  }
  const shedding = routerShed > 0 || samples.some((s) => s.shedPerS > 0);
  if (n > 1 && !shedding && demand / (n - 1) <= SCALE_DOWN_BELOW) {
    const down = clamp(Math.ceil(demand / SCALE_DOWN_BELOW - 1e-9));
    return {
      backends: n,
      recommended: down,
      demand,
      direction: "down",
      reason: `demand ${d} backend-equivalents fits ${down} backends at ≤ ${SCALE_DOWN_BELOW}`,
    };
  }
  return {
    backends: n,
    recommended: n,
    demand,
    direction: "none",
    reason: `demand ${d} backend-equivalents fits ${n} backends (pool saturation ` +
      `${mean.toFixed(2)})`,
  };
}
