/**
 * @module What the rules before the load signal said, computed from the same
 * measurements (bench only, for the before/after table): the doctor's "accelerator
 * utilisation below 70 %" on executor busy time, the scaler's capacity as tokens/s ÷
 * executor utilisation, and the hot-expert alert as one expert's device time over its
 * backend's executor capacity. Pure.
 */

/** One backend as `/api/load` shows it. */
export interface BackendRow {
  utilisation: number | null;
  tokens_s: number | null;
  stale: boolean;
}

/** The old doctor check: mean executor utilisation < 0.7 → "yes". */
export function oldDoctorUtilisation(backends: readonly BackendRow[]) {
  const u = backends.filter((b) => !b.stale && b.utilisation !== null).map((b) => b.utilisation!);
  if (u.length === 0) return { value: null, answer: "unknown" };
  const mean = u.reduce((a, b) => a + b, 0) / u.length;
  return { value: mean, answer: mean < 0.7 ? "yes" : "no" };
}

/** The old scaler: capacity = median tokens/s ÷ utilisation, target = ceil(load ÷ (cap · 0.8)). */
export function oldScaler(backends: readonly BackendRow[], maxBackends = 8, threshold = 0.8) {
  const fresh = backends.filter((b) => !b.stale && b.tokens_s !== null && b.utilisation !== null);
  const caps = fresh.filter((b) => b.utilisation! >= 0.05 && b.tokens_s! > 0)
    .map((b) => b.tokens_s! / Math.min(1, b.utilisation!)).sort((a, b) => a - b);
  if (caps.length === 0) return { capacity: null, target: null, backends: fresh.length };
  const mid = Math.floor(caps.length / 2);
  const capacity = caps.length % 2 ? caps[mid]! : (caps[mid - 1]! + caps[mid]!) / 2;
  const load = fresh.reduce((sum, b) => sum + b.tokens_s!, 0);
  const target = Math.min(Math.max(1, Math.ceil(load / (capacity * threshold))), maxBackends);
  return { capacity, target, backends: fresh.length };
}

/** A part of a `/v2/load` report. */
export interface PartRow {
  part: string;
  kind: string;
  busyMs: number;
}

/** The old hot-expert value: the largest expert device ms/s ÷ (1000 · slots) of a backend. */
export function oldHottestShare(
  before: { at: number; slots: number; parts: PartRow[] },
  after: { at: number; slots: number; parts: PartRow[] },
): number {
  const old = new Map(before.parts.map((p) => [p.part, p.busyMs]));
  const seconds = (after.at - before.at) / 1000;
  let max = 0;
  for (const part of after.parts) {
    if (part.kind !== "expert" || !(seconds > 0)) continue;
    const msPerS = (part.busyMs - (old.get(part.part) ?? 0)) / seconds;
    max = Math.max(max, msPerS / (1000 * after.slots));
  }
  return max;
}
