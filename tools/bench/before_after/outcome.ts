/**
 * @module One run's figures against the SLO, and their spread over seeds, pure. The SLO
 * is applied here, after every run is in, so each configuration and seed of an executor
 * is judged against the same bound.
 */
import { measurePhase, type PhaseMeasure, slice } from "./goodput.ts";
import type { ConfigRun, PhaseRecord } from "./run_config.ts";

/** The figures of one run. */
export interface RunOutcome {
  executor: string;
  config: string;
  seed: number;
  idle: PhaseMeasure;
  saturation: PhaseMeasure;
  /** Cores of the router, the backends and the load generator at saturation. */
  saturationCores: { router: number; backends: number; generator: number };
  /** Device busy share of the busiest backend at saturation (the bottleneck check). */
  saturationBusyMax: number;
  /** Mean device busy share over the backends at saturation. */
  saturationBusyMean: number;
  sweep: { fraction: number; offeredRps: number; measure: PhaseMeasure }[];
  /** The shift phase, whole and per mix (answers completed in each stretch); null: none. */
  shift: PhaseMeasure | null;
  shiftByMix: PhaseMeasure[];
  /** Pool figures of the phase the load metrics come from (shift, else saturation). */
  backendCv: number;
  replicaCv: number | null;
  logicalCv: number;
  busyMean: number;
  busyMax: number;
  /** Non-200 answers ÷ requests sent, over every measured phase. */
  errorRate: number;
  errorKinds: Record<string, number>;
  /** Open-loop arrivals the generator shed ÷ open-loop arrivals. */
  shedRate: number;
  /** Plan switches during the measured phases, by `action/trigger`. */
  switches: number;
  switchesBy: Record<string, number>;
  /**
   * Seconds the measured phases spent in plan switches (decision → every backend active,
   * the balancer's own account), their share of the measured time, and the expert bytes
   * they moved; null when the router does not report it.
   */
  switchingS: number | null;
  switchingShareAll: number | null;
  movedMb: number | null;
  /** EPLB re-plans applied, their mean switch time, and the share of the measured time spent switching. */
  replans: number;
  /** Periods skipped because the last re-plan was still switching. */
  replansSkipped: number;
  replanMs: number | null;
  switchingShare: number | null;
  startupS: number;
  warmedS: number;
  /** When each phase started and each plan switch happened (s after the warm-up). */
  timeline: {
    phases: { name: string; startS: number }[];
    /** Mix changes of the shift phase on the same clock. */
    mixesAtS: number[];
    switches: { atS: number; action: string; moved: number }[];
  };
}

function phase(run: ConfigRun, name: string): PhaseRecord | undefined {
  return run.phases.find((p) => p.name === name);
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;

/** The figures of `run` against `sloMs`. */
export function outcomeOf(run: ConfigRun, sloMs: number): RunOutcome {
  const idle = phase(run, "idle");
  const saturation = phase(run, "saturation");
  if (idle === undefined || saturation === undefined) {
    throw new RangeError(`Cannot summarise ${run.config} seed ${run.seed}: no idle/saturation`);
  }
  const shift = phase(run, "shift");
  const loadPhase = shift ?? saturation;
  const open = run.phases.filter((p) => p.offeredRps !== null);
  const sent = run.phases.reduce((sum, p) => sum + p.result.sent, 0);
  const errors = run.phases.reduce((sum, p) => sum + p.result.errors, 0);
  const kinds: Record<string, number> = {};
  for (const p of run.phases) {
    for (const [kind, n] of Object.entries(p.result.errorKinds)) {
      kinds[kind] = (kinds[kind] ?? 0) + n;
    }
  }
  const openArrivals = open.reduce((sum, p) => sum + p.result.sent + p.result.shed, 0);
  const shed = open.reduce((sum, p) => sum + p.result.shed, 0);
  const bounds = [...run.mixStartsS, Number.POSITIVE_INFINITY];
  const applied = run.replans.filter((r) => r.switchMs !== null);
  const measured = run.switches.filter((s) => s.atS >= 0);
  const switchesBy: Record<string, number> = {};
  for (const s of measured) {
    const key = `${s.action}/${s.trigger}`;
    switchesBy[key] = (switchesBy[key] ?? 0) + 1;
  }
  const last = run.phases.at(-1);
  const measuredS = last === undefined ? 0 : last.startS + last.result.seconds;
  return {
    executor: run.executor,
    config: run.config,
    seed: run.seed,
    idle: measurePhase(idle.result, sloMs),
    saturation: measurePhase(saturation.result, sloMs),
    saturationCores: saturation.pool.cores,
    saturationBusyMax: Math.max(...saturation.pool.deviceBusy),
    saturationBusyMean: mean(saturation.pool.deviceBusy),
    sweep: run.phases.filter((p) => p.name.startsWith("rate-")).map((p) => ({
      fraction: p.fraction!,
      offeredRps: p.offeredRps!,
      measure: measurePhase(p.result, sloMs),
    })),
    shift: shift === undefined ? null : measurePhase(shift.result, sloMs),
    shiftByMix: shift === undefined ? [] : run.mixStartsS.map((from, i) =>
      measurePhase(
        slice(shift.result, from, Math.min(bounds[i + 1]!, shift.result.seconds)),
        sloMs,
      )
    ),
    backendCv: loadPhase.pool.backendCv,
    replicaCv: loadPhase.pool.replicaCv,
    logicalCv: loadPhase.pool.logicalCv,
    busyMean: mean(loadPhase.pool.deviceBusy),
    busyMax: Math.max(...loadPhase.pool.deviceBusy),
    errorRate: sent === 0 ? 0 : errors / sent,
    errorKinds: kinds,
    shedRate: openArrivals === 0 ? 0 : shed / openArrivals,
    switches: measured.length,
    switchesBy,
    switchingS: run.switching?.seconds ?? null,
    switchingShareAll: run.switching === null || !(measuredS > 0)
      ? null
      : run.switching.seconds / measuredS,
    movedMb: run.switching === null ? null : run.switching.movedBytes / 2 ** 20,
    replans: applied.length,
    replansSkipped: run.replans.filter((r) => r.problem?.startsWith("skipped") ?? false).length,
    replanMs: applied.length === 0 ? null : mean(applied.map((r) => r.switchMs!)),
    switchingShare: applied.length === 0 || !(measuredS > 0)
      ? null
      : applied.reduce((sum, r) => sum + r.switchMs!, 0) / 1000 / measuredS,
    startupS: run.startupS,
    warmedS: run.warmedS,
    timeline: {
      phases: run.phases.map((p) => ({ name: p.name, startS: p.startS })),
      mixesAtS: shift === undefined ? [] : run.mixStartsS.slice(1).map((t) => shift.startS + t),
      switches: measured.map((s) => ({ atS: s.atS, action: s.action, moved: s.moved })),
    },
  };
}

/** Mean and range of one figure over seeds. */
export interface Spread {
  mean: number;
  min: number;
  max: number;
  n: number;
}

/** The spread of the finite `values`; NaN figures when there are none. */
export function spreadOf(values: readonly (number | null)[]): Spread {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (finite.length === 0) return { mean: NaN, min: NaN, max: NaN, n: 0 };
  return {
    mean: mean(finite),
    min: Math.min(...finite),
    max: Math.max(...finite),
    n: finite.length,
  };
}
