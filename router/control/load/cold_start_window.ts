/**
 * @module Cold starts per backend for the load view and the dashboard: the total since
 * the backend started (Σ `coldStarts` over its routed-expert parts in its latest load
 * report) and the recent rate, per minute over the last `windowMs` (default 60 s) of
 * reports. Pure; the load collector keeps the history between rounds.
 *
 * Design: per backend a short list of `(at, total)`; the rate is the growth from the
 * newest entry at or before `now − windowMs` (else the oldest kept) to the newest, per
 * minute of the time between them. A total that goes back (the backend restarted)
 * starts the list again. One report per 1 s load round: the list stays ~60 entries.
 */
import type { LoadReport } from "../../../shared/load_report.ts";

/** One backend's cold-start totals over time (router clock ms), oldest first. */
export type ColdStartEntries = readonly { at: number; total: number }[];

/** Backend id → its entries. */
export type ColdStartHistory = ReadonlyMap<string, ColdStartEntries>;

/** Default window of the recent rate (ms). */
export const COLD_START_WINDOW_MS = 60_000;

/** Σ cold starts of a report's routed experts; undefined when no part reports them. */
export function coldStartTotal(report: LoadReport | undefined): number | undefined {
  if (report === undefined) return undefined;
  let total: number | undefined;
  for (const part of report.parts) {
    if (part.coldStarts === undefined) continue;
    total = (total ?? 0) + part.coldStarts;
  }
  return total;
}

/** `history` with the round's totals added and entries beyond the window's baseline dropped. */
export function rememberColdStarts(
  history: ColdStartHistory,
  round: readonly { id: string; at: number; total: number | undefined }[],
  windowMs = COLD_START_WINDOW_MS,
): Map<string, ColdStartEntries> {
  const next = new Map(history);
  for (const { id, at, total } of round) {
    if (total === undefined) continue;
    const old = next.get(id) ?? [];
    const last = old.at(-1);
    if (last !== undefined && at <= last.at) continue;
    const list = last !== undefined && total < last.total ? [] : [...old];
    list.push({ at, total });
    // Keep the newest entry at or before the window start as the baseline.
    const start = at - windowMs;
    let from = 0;
    while (from + 1 < list.length && list[from + 1]!.at <= start) from++;
    next.set(id, list.slice(from));
  }
  return next;
}

/** Cold starts per minute over the window ending at the newest entry; undefined without two. */
export function recentColdStartsPerMin(
  entries: ColdStartEntries | undefined,
  windowMs = COLD_START_WINDOW_MS,
): number | undefined {
  if (entries === undefined || entries.length < 2) return undefined;
  const last = entries.at(-1)!;
  const start = last.at - windowMs;
  let base = entries[0]!;
  for (const entry of entries) if (entry.at <= start) base = entry;
  if (last.at <= base.at) return undefined;
  return (last.total - base.total) * 60_000 / (last.at - base.at);
}
