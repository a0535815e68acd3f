/**
 * @module The pre-warm job's prediction, pure: request volume over the horizon with
 * scheduled events applied, the request-type mix at the peak, and per-expert load.
 *
 * Design.
 * - Volume: the forecast's points (router tokens/s, events excluded) × the largest
 *   multiplier of the events active at each point. An event whose lead time has begun
 *   but which starts after the last point adds a point at its start: the last forecast
 *   value × its multiplier, so a 5× event an hour away is planned for now, not when it
 *   enters the horizon.
 * - Mix: the event's mix at a point an event covers, else the observed mix; normalised.
 * - Expert load at the peak: `V · Σ_type mix[type] · affinity[type][layer][expert]`, each
 *   affinity row scaled to sum to top-k, so the result is in expert tokens/s — the unit
 *   of the load reports and of the balancer's observed load. Types without a profile use
 *   the `"*"` profile (all traffic), else the mean of the profiles known.
 */
import type { ExpertAffinity, PrewarmEvent, VolumePoint } from "./prewarm_types.ts";

/** A forecast point with events applied. */
export interface PredictedPoint extends VolumePoint {
  /** The event that sets this point's multiplier, if any. */
  event: PrewarmEvent | null;
}

/** Options of {@linkcode predictVolume}. */
export interface PredictVolumeOptions {
  now: number;
  /** Lead time of events that do not set their own (ms). */
  defaultLeadMs: number;
  /** Volume to scale when the forecast has no points (e.g. the observed tokens/s). */
  fallbackTokensPerS?: number;
}

/**
 * Whether `event`'s lead time (the job's lead, or the event's own when longer) has begun at
 * `now` and it has not ended.
 */
export function inLeadWindow(event: PrewarmEvent, now: number, defaultLeadMs: number): boolean {
  const lead = Math.max(defaultLeadMs, event.leadTimeMs ?? 0);
  return now >= event.start - lead && now < event.end;
}

/** The forecast with events applied, plus a point per leading event beyond it. */
export function predictVolume(
  points: readonly VolumePoint[],
  events: readonly PrewarmEvent[],
  options: PredictVolumeOptions,
): PredictedPoint[] {
  const activeAt = (at: number) =>
    events.filter((e) => at >= e.start && at < e.end)
      .reduce<PrewarmEvent | null>(
        (best, e) => best && best.multiplier >= e.multiplier ? best : e,
        null,
      );
  const predicted: PredictedPoint[] = points.map((point) => {
    const event = activeAt(point.at);
    return { at: point.at, tokensPerS: point.tokensPerS * (event?.multiplier ?? 1), event };
  });
  const last = points.at(-1);
  const base = last?.tokensPerS ?? options.fallbackTokensPerS ?? 0;
  for (const event of events) {
    if (!inLeadWindow(event, options.now, options.defaultLeadMs)) continue;
    const at = Math.max(event.start, options.now);
    if (last !== undefined && at <= last.at) continue;
    predicted.push({ at, tokensPerS: base * event.multiplier, event });
  }
  return predicted.sort((a, b) => a.at - b.at);
}

/** The point of highest volume (earliest on ties), or null when there is none. */
export function peakPoint(points: readonly PredictedPoint[]): PredictedPoint | null {
  return points.reduce<PredictedPoint | null>(
    (best, p) => best === null || p.tokensPerS > best.tokensPerS ? p : best,
    null,
  );
}

/** `mix` scaled to sum to 1, without non-positive or non-finite shares; `{}` when empty. */
export function normaliseMix(mix: Readonly<Record<string, number>>): Record<string, number> {
  const entries = Object.entries(mix).filter(([, v]) => Number.isFinite(v) && v > 0);
  const total = entries.reduce((sum, [, v]) => sum + v, 0);
  return total > 0 ? Object.fromEntries(entries.map(([k, v]) => [k, v / total])) : {};
}

/** The mix at `point`: its event's mix when it sets one, else `observed`; normalised. */
export function mixAt(
  point: PredictedPoint,
  observed: Readonly<Record<string, number>> | null,
): Record<string, number> {
  const eventMix = point.event?.mix === undefined ? {} : normaliseMix(point.event.mix);
  if (Object.keys(eventMix).length > 0) return eventMix;
  return normaliseMix(observed ?? {});
}

/** Options of {@linkcode predictExpertLoad}. */
export interface ExpertLoadOptions {
  layers: number;
  experts: number;
  /** Expert tokens per routed token per layer; default 1. */
  topK?: number;
}

/**
 * `[layer][expert]` expert tokens/s for `tokensPerS` routed tokens of `mix`; null when
 * the affinity has no profile of the model's shape to use.
 */
export function predictExpertLoad(
  tokensPerS: number,
  mix: Readonly<Record<string, number>>,
  affinity: ExpertAffinity,
  options: ExpertLoadOptions,
): number[][] | null {
  const { layers, experts } = options;
  const topK = options.topK ?? 1;
  const profiles = new Map<string, number[][]>();
  for (const [type, profile] of Object.entries(affinity)) {
    const scaled = scaledProfile(profile, layers, experts, topK);
    if (scaled !== null) profiles.set(type, scaled);
  }
  if (profiles.size === 0) return null;
  const fallback = profiles.get("*") ?? meanProfile([...profiles.values()], layers, experts);
  const shares = Object.keys(mix).length > 0 ? mix : { "*": 1 };
  const load = Array.from({ length: layers }, () => new Array<number>(experts).fill(0));
  for (const [type, share] of Object.entries(shares)) {
    const profile = profiles.get(type) ?? fallback;
    for (let l = 0; l < layers; l++) {
      for (let e = 0; e < experts; e++) {
        load[l]![e]! += tokensPerS * share * profile[l]![e]!;
      }
    }
  }
  return load;
}

/** `profile` (rows padded to `experts`) scaled to sum to `topK` per layer; null when it does not fit. */
function scaledProfile(
  profile: readonly (readonly number[])[],
  layers: number,
  experts: number,
  topK: number,
): number[][] | null {
  if (profile.length !== layers) return null;
  const rows: number[][] = [];
  for (const row of profile) {
    // Counts grow with the highest expert seen; a shorter row means zeros beyond it.
    if (row.length > experts) return null;
    const clean = Array.from({ length: experts }, (_, e) => {
      const v = row[e] ?? 0;
      return Number.isFinite(v) && v > 0 ? v : 0;
    });
    const total = clean.reduce((sum, v) => sum + v, 0);
    if (total <= 0) return null;
    rows.push(clean.map((v) => (v / total) * topK));
  }
  return rows;
}

function meanProfile(profiles: number[][][], layers: number, experts: number): number[][] {
  return Array.from(
    { length: layers },
    (_, l) =>
      Array.from(
        { length: experts },
        (_, e) => profiles.reduce((sum, p) => sum + p[l]![e]!, 0) / profiles.length,
      ),
  );
}
