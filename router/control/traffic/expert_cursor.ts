/**
 * @module Expert-load series from the backends' own counters, pure: a cursor per backend
 * says which of its cumulative routed-expert token counters the series already holds;
 * the next report adds what it counted since, spread over the buckets of the time it
 * covers. Because the cursor lives in KV with the series (written in the same commit), a
 * new leader continues exactly where the last committed write of the old one ended: the
 * tokens counted while nobody led are added at its first round, none twice.
 *
 * Rules ({@linkcode tokensSince}): no cursor → nothing is added, the report becomes the
 * cursor (counters from before the series knew the backend are not attributed to a
 * moment); same run (`sameRun`) → the counters' growth over `[cursor.at, report.at]`;
 * a restarted backend (counters started again) → everything it counted since it started,
 * over `[max(cursor.at, started), report.at]`; one part whose counter fell below its cursor
 * (rebuilt by a plan switch) → everything that part counted.
 */
import type { LoadReport } from "../../../shared/load_report.ts";
import { bucketStart } from "../state/bucket_grid.ts";

/** Which counters of one backend the series holds. */
export interface ExpertCursor {
  backend: string;
  model: string;
  /** The report's time (backend clock, ms). */
  at: number;
  uptimeMs: number;
  /** Σ tokens of the run (a restart shows as a smaller value). */
  tokens: number;
  busyMs: number;
  requests: number;
  /** Routed-expert tokens since start, by `layer/expert`. */
  experts: Record<string, number>;
}

/** Tokens per expert of one layer added over a time span. */
export interface ExpertTokensAdd {
  layer: number;
  tokens: number[];
  from: number;
  to: number;
}

/** The cursor a report leaves. */
export function cursorOf(report: LoadReport): ExpertCursor {
  const experts: Record<string, number> = {};
  for (const part of report.parts) {
    if (part.kind !== "expert") continue;
    const key = `${part.layer}/${part.expert}`;
    experts[key] = (experts[key] ?? 0) + part.tokens;
  }
  return {
    backend: report.backend,
    model: report.model,
    at: report.at,
    uptimeMs: report.uptimeMs,
    tokens: report.tokens,
    busyMs: report.busyMs,
    requests: report.requests,
    experts,
  };
}

function sameRun(cursor: ExpertCursor, report: LoadReport): boolean {
  return cursor.backend === report.backend && cursor.model === report.model &&
    report.at >= cursor.at && report.uptimeMs >= cursor.uptimeMs &&
    report.tokens >= cursor.tokens && report.busyMs >= cursor.busyMs &&
    report.requests >= cursor.requests;
}

/** What `report` counted since `cursor`, per layer, and the cursor it leaves; see the module doc. */
export function tokensSince(
  cursor: ExpertCursor | undefined,
  report: LoadReport,
): { adds: ExpertTokensAdd[]; next: ExpertCursor } {
  const next = cursorOf(report);
  if (cursor === undefined) return { adds: [], next };
  const continued = sameRun(cursor, report);
  const from = continued ? cursor.at : Math.max(cursor.at, report.at - report.uptimeMs);
  const layers = new Map<number, number[]>();
  for (const [key, now] of Object.entries(next.experts)) {
    // One part's counter below its cursor started again (a plan switch rebuilt the part's
    // executable): all it counted since then is new.
    const before = continued ? cursor.experts[key] ?? 0 : 0;
    const grown = now >= before ? now - before : now;
    if (!(grown > 0)) continue;
    const [layer, expert] = key.split("/").map(Number) as [number, number];
    let vector = layers.get(layer);
    if (vector === undefined) layers.set(layer, vector = []);
    while (vector.length <= expert) vector.push(0);
    vector[expert]! += grown;
  }
  const adds = [...layers].sort(([a], [b]) => a - b).map(([layer, tokens]) => ({
    layer,
    tokens,
    from,
    to: Math.max(from, report.at),
  }));
  return { adds, next };
}

/**
 * `add` split over the buckets its span overlaps, in proportion to the overlap (all in
 * the bucket of `to` when the span is empty).
 */
export function spreadOverBuckets(
  add: ExpertTokensAdd,
  bucketMs: number,
): { start: number; layer: number; tokens: number[] }[] {
  const { from, to, layer, tokens } = add;
  if (!(to > from)) return [{ start: bucketStart(to, bucketMs), layer, tokens: [...tokens] }];
  const out: { start: number; layer: number; tokens: number[] }[] = [];
  for (let start = bucketStart(from, bucketMs); start < to; start += bucketMs) {
    const share = (Math.min(to, start + bucketMs) - Math.max(from, start)) / (to - from);
    if (share > 0) out.push({ start, layer, tokens: tokens.map((t) => t * share) });
  }
  return out;
}
