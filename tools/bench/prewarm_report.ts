/**
 * @module The pre-warm benchmark's measures, pure over one run's record: goodput under the
 * SLO over the event's first 10 minutes, p99 over its first 5, backend-minutes over
 * T ± the window, expert loads on the request path in the first 5 minutes, p99 in the hour
 * before; per-policy aggregates over seeds (mean, min–max); the targets check; and the
 * timeline of backends requested / ready / serving around the event.
 */
import { formatTable, quantile, round } from "./stats.ts";
import { LABELS, type PolicyName } from "./prewarm_policies.ts";
import { MINUTE } from "./prewarm_workload.ts";

/** One request as sent. */
export interface SentRequest {
  /** Simulated instant it was sent. */
  sim: number;
  /** Real ms from its scheduled send to its answer. */
  latencyMs: number;
  status: number;
}

/** One timeline sample (simulated instant). */
export interface TimelineSample {
  at: number;
  /** Backends the launcher runs or starts (the scaler's requests). */
  requested: number;
  /** Of those, ready (passed their readiness probe). */
  ready: number;
  active: number;
  standby: number;
  draining: number;
  /** Active backends that served tokens in the last load round. */
  busy: number;
}

/** One run's record. */
export interface RunRecord {
  policy: PolicyName;
  seed: number;
  sent: SentRequest[];
  timeline: TimelineSample[];
  /** Backend-minutes over [T − window, T + window] (simulated). */
  backendMinutes: number;
  /** Expert loads on the request path in the event's first 5 minutes. */
  coldStartsFirst5: number;
  /** What the job measured and planned (switchyard/oracle): lead and cold-start percentile. */
  lead?: { leadMs: number; coldStartMs: number | null; source: string };
  realSeconds: number;
}

/** The measures of one run. */
export interface RunMeasures {
  requestsFirst10: number;
  /** Requests answered 200 within the SLO per real second, event's first 10 minutes. */
  goodputFirst10: number;
  p99First5: number;
  p99HourBefore: number;
  backendMinutes: number;
  coldStartsFirst5: number;
}

/** Options of {@linkcode measure}. */
export interface MeasureOptions {
  start: number;
  sloMs: number;
  /** Simulated seconds per real second. */
  speed: number;
}

/** The measures of `run`. */
export function measure(run: RunRecord, options: MeasureOptions): RunMeasures {
  const { start, sloMs, speed } = options;
  const inWindow = (from: number, to: number) =>
    run.sent.filter((s) => s.sim >= start + from && s.sim < start + to);
  const p99 = (list: SentRequest[]) => {
    const ok = list.filter((s) => s.status === 200).map((s) => s.latencyMs);
    return ok.length === 0 ? NaN : quantile(ok, 0.99);
  };
  const first10 = inWindow(0, 10 * MINUTE);
  const good = first10.filter((s) => s.status === 200 && s.latencyMs <= sloMs).length;
  return {
    requestsFirst10: first10.length,
    goodputFirst10: good / ((10 * MINUTE) / speed / 1000),
    p99First5: p99(inWindow(0, 5 * MINUTE)),
    p99HourBefore: p99(inWindow(-60 * MINUTE, 0)),
    backendMinutes: run.backendMinutes,
    coldStartsFirst5: run.coldStartsFirst5,
  };
}

/** Mean and range over seeds. */
export interface Spread {
  mean: number;
  min: number;
  max: number;
  n: number;
}

/** Mean, min and max of the finite values. */
export function spread(values: readonly number[]): Spread {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return { mean: NaN, min: NaN, max: NaN, n: 0 };
  return {
    mean: finite.reduce((a, b) => a + b, 0) / finite.length,
    min: Math.min(...finite),
    max: Math.max(...finite),
    n: finite.length,
  };
}

/** `mean (min–max)`, or `mean` for one seed. */
export function formatSpread(s: Spread, digits = 1): string {
  if (s.n === 0) return "-";
  const f = (v: number) => round(v, digits).toString();
  return s.n === 1 || s.min === s.max ? f(s.mean) : `${f(s.mean)} (${f(s.min)}–${f(s.max)})`;
}

/** The issue's targets, judged on the means. */
export function targetsCheck(
  by: ReadonlyMap<PolicyName, RunMeasures[]>,
): { target: string; value: string; met: boolean | null }[] {
  const mean = (policy: PolicyName, pick: (m: RunMeasures) => number) =>
    spread((by.get(policy) ?? []).map(pick)).mean;
  const sw = (pick: (m: RunMeasures) => number) => mean("switchyard", pick);
  const rows: { target: string; value: string; met: boolean | null }[] = [];
  const judge = (target: string, value: number, ok: (v: number) => boolean, text: string) =>
    rows.push({ target, value: text, met: Number.isFinite(value) ? ok(value) : null });
  const oracle = mean("oracle", (m) => m.goodputFirst10);
  const ratio = sw((m) => m.goodputFirst10) / oracle;
  judge(
    "goodput first 10 min ≥ 0.98 × oracle",
    ratio,
    (v) => v >= 0.98,
    `${round(ratio, 3)} × oracle`,
  );
  const cold = sw((m) => m.coldStartsFirst5);
  judge(
    "0 expert loads on the request path, first 5 min",
    cold,
    (v) => v === 0,
    `${round(cold, 1)}`,
  );
  const before = sw((m) => m.p99HourBefore) / mean("none", (m) => m.p99HourBefore);
  judge(
    "p99 in the hour before within 5 % of no pre-warming",
    before,
    (v) => v <= 1.05,
    `${round(before, 3)} ×`,
  );
  const minutes = sw((m) => m.backendMinutes) / mean("seed", (m) => m.backendMinutes);
  judge(
    "backend-seconds ≥ 25 % below B3",
    minutes,
    (v) => v <= 0.75,
    `${round(100 * (1 - minutes), 1)} % below`,
  );
  const b1 = sw((m) => m.goodputFirst10) / mean("reactive", (m) => m.goodputFirst10);
  judge("goodput first 10 min above B1", b1, (v) => v > 1, `${round(b1, 3)} × B1`);
  const b2 = sw((m) => m.goodputFirst10) / mean("forecast", (m) => m.goodputFirst10);
  judge("goodput first 10 min above B2", b2, (v) => v > 1, `${round(b2, 3)} × B2`);
  return rows;
}

/** Timeline rows every `stepMin` minutes in `[from, to]` minutes around T: `req/ready/active(+standby)/busy`. */
export function timelineRows(
  runs: readonly RunRecord[],
  options: { start: number; from: number; to: number; stepMin: number },
): { header: string[]; rows: string[][] } {
  const header = ["minute", ...runs.map((r) => r.policy)];
  const rows: string[][] = [];
  for (let m = options.from; m <= options.to; m += options.stepMin) {
    const at = options.start + m * MINUTE;
    rows.push([
      `${m >= 0 ? "T+" : "T"}${m}`,
      ...runs.map((r) => {
        const s = r.timeline.reduce<TimelineSample | undefined>(
          (best, t) => t.at <= at && (best === undefined || t.at > best.at) ? t : best,
          undefined,
        );
        return s === undefined
          ? "-"
          : `${s.requested}/${s.ready}/${s.active}${s.standby > 0 ? `+${s.standby}s` : ""}${
            s.draining > 0 ? `+${s.draining}d` : ""
          }/${s.busy}`;
      }),
    ]);
  }
  return { header, rows };
}

/** What {@linkcode comparisonTable} labels differently per run kind. */
export interface ComparisonLabels {
  /** What a pool member is called: `backend` (real stack) or `accelerator` (simulator). */
  unit: string;
  /** The ± window of the unit-minutes column, in minutes. */
  windowMin: number;
  /** A fixed text for the expert-loads column (e.g. "0 (by construction)"); else measured. */
  expertLoads?: string;
}

/** The policies side by side: each measure's mean (min–max over seeds). */
export function comparisonTable(
  policies: readonly PolicyName[],
  by: ReadonlyMap<PolicyName, RunMeasures[]>,
  labels: ComparisonLabels,
): string {
  const oracle = spread((by.get("oracle") ?? []).map((m) => m.goodputFirst10)).mean;
  const header = [
    "policy",
    "requests, first 10 min",
    "goodput ≤ SLO, first 10 min (req/s)",
    "× oracle",
    "p99 first 5 min (ms)",
    `${labels.unit}-minutes T±${labels.windowMin} min`,
    "expert loads on request path, first 5 min",
    "p99 hour before (ms)",
  ];
  return formatTable(
    header,
    policies.map((p) => {
      const ms = by.get(p) ?? [];
      const s = (pick: (m: RunMeasures) => number, digits = 1) =>
        formatSpread(spread(ms.map(pick)), digits);
      return [
        LABELS[p],
        s((m) => m.requestsFirst10, 0),
        s((m) => m.goodputFirst10),
        Number.isFinite(oracle) ? s((m) => m.goodputFirst10 / oracle, 3) : "-",
        s((m) => m.p99First5, 0),
        s((m) => m.backendMinutes, 0),
        labels.expertLoads ?? s((m) => m.coldStartsFirst5, 0),
        s((m) => m.p99HourBefore, 0),
      ];
    }),
  );
}

/** The issue's targets for Switchyard, met or not ({@linkcode targetsCheck}) as a table. */
export function targetsTable(by: ReadonlyMap<PolicyName, RunMeasures[]>): string {
  return formatTable(
    ["target", "Switchyard", "met"],
    targetsCheck(by).map((c) => [c.target, c.value, c.met === null ? "n/a" : c.met ? "yes" : "NO"]),
  );
}
