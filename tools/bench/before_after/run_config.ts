/**
 * @module One configuration, one seed, one executor: a fresh pool of real processes
 * through the before/after's phases (`phases.ts`), measured from outside.
 *
 *   Step 1: start the router and backends with the pool's and the configuration's
 *           settings; wait for the first plan.
 *   Step 2: warm-up — a closed loop on the first mix, excluded from every result: at
 *           least `warmS`, then on until the plan has not changed for `settleS` (at most
 *           `maxWarmS` in all), so a balancer that is still converging on the first mix
 *           is not measured mid-switch. For `eplb-10min` the first greedy plan is applied
 *           on the warm-up's load, then one every EPLB period until the end.
 *   Step 3: idle (one client), then saturation (closed loop; its first `rampS` excluded,
 *           the clients all start at once) → the capacity.
 *   Step 4: the rate sweep — open loop at each fraction of the base rate (the static
 *           baseline's capacity in this seed; the baseline's own when it is the baseline).
 *   Step 5: the shift phase — one compressed hour of open loop at the shift rate, the
 *           mix (and so the hot experts) changing `shifts` times.
 * Every phase records its load run, the pool's interval (`pool_probe.ts`) and the time it
 * started; plan switches are watched throughout. Measures only: SLOs and ratios are
 * applied later, once every run is in.
 */
import { startPool, type TestPool } from "../../pool/processes.ts";
import { closedLoop, type LoadResult, openLoop } from "../load_generator.ts";
import type { PreparedRequest } from "../workload.ts";
import { waitFor } from "../../wait_for.ts";
import { json } from "../http_probe.ts";
import type { PlacementConfig, PoolSettings } from "./configs.ts";
import { poolEnv } from "./configs.ts";
import { eplbPeriodS, mixAt, mixSegments, type PhasePlan } from "./phases.ts";
import { steadyPart } from "./goodput.ts";
import { hosting, type PoolInterval, poolInterval, snapshot } from "./pool_probe.ts";
import { type PlanSwitch, PlanWatch } from "./plan_watch.ts";
import { EplbDriver, type EplbReplan } from "./eplb_driver.ts";

/** What one run needs. */
export interface RunSpec {
  executor: string;
  modelDir: string;
  model: { name: string; layers: number; experts: number; groups: number };
  config: PlacementConfig;
  pool: PoolSettings;
  seed: number;
  phases: PhasePlan;
  /**
   * Slots per backend the memory budget allows: the run waits (bounded) for a first plan
   * within it — a plan made before the backends reported their budgets can hold more.
   */
  budgetSlots: number | null;
  /** Base of the open-loop rates (req/s): the static baseline's capacity; null: own. */
  baseRps: number | null;
  /** Whether the open-loop phases (sweep, shift) run; the demo check needs only capacity. */
  openLoops: boolean;
  /** The prepared requests of mix `mix` (0 = the model's own type ranking). */
  workload: (mix: number) => readonly PreparedRequest[];
  /** Closed-loop clients at saturation, and during the warm-up. */
  concurrency: number;
  warmClients: number;
  /** Gamma shape of the open-loop arrivals (1 = Poisson). */
  burstiness: number;
  log: (line: string) => void;
  /** Told of the pool once started (and of null once closed), to stop it on a signal. */
  onPool?: (pool: TestPool | null) => void;
}

/** One measured phase. */
export interface PhaseRecord {
  /** `idle`, `saturation`, `rate-0.7`, `shift`. */
  name: string;
  /** Offered rate of an open loop (req/s), null for a closed loop. */
  offeredRps: number | null;
  /** That rate as a fraction of the base rate, null for a closed loop. */
  fraction: number | null;
  /** Seconds after the warm-up ended. */
  startS: number;
  result: LoadResult;
  pool: PoolInterval;
}

/** Everything one run measured. */
export interface ConfigRun {
  executor: string;
  config: string;
  seed: number;
  /** Seconds from spawning the pool to its first plan (or readiness, without plans). */
  startupS: number;
  /** Seconds the warm-up took (it goes on until the plan has settled). */
  warmedS: number;
  /** Expert slots per layer per backend of the first plan; null without one. */
  slots: number | null;
  phases: PhaseRecord[];
  /** Plan switches after the first plan; `atS` after the warm-up (negative: during it). */
  switches: (PlanSwitch & { atS: number })[];
  /**
   * The balancer's own account (`GET /api/plan` health) of the measured phases: switches,
   * their seconds from decision to every backend active, expert bytes they made backends
   * load; null when the router does not report it.
   */
  switching: { count: number; seconds: number; movedBytes: number } | null;
  /** EPLB re-plans (the eplb configuration only), on the same clock. */
  replans: (EplbReplan & { atS: number })[];
  /** Closed-loop capacity at saturation (req/s). */
  capacityRps: number;
  /** Mix changes of the shift phase, seconds into it. */
  mixStartsS: number[];
}

/** Switch count, seconds and bytes moved so far, from `GET /api/plan`'s health; null: none. */
async function switchHealth(
  url: string,
): Promise<{ count: number; seconds: number; movedBytes: number } | null> {
  try {
    const health = (await json(`${url}/api/plan`)).health;
    const durations = health?.switch_duration_s;
    if (typeof durations?.count !== "number" || typeof durations?.sum !== "number") return null;
    return {
      count: durations.count,
      seconds: durations.sum,
      movedBytes: typeof health.moved_bytes === "number" ? health.moved_bytes : 0,
    };
  } catch {
    return null;
  }
}

/** Runs one configuration; see the module doc. */
export async function runConfig(spec: RunSpec): Promise<ConfigRun> {
  const { config, phases: plan, model } = spec;
  const spawned = performance.now();
  // Step 1: the pool.
  const pool: TestPool = await startPool({
    modelDir: spec.modelDir,
    backends: spec.pool.backends,
    executors: 1,
    env: { ...poolEnv(spec.pool), ...config.env },
  });
  spec.onPool?.(pool);
  try {
    const url = pool.router.url;
    const path = `${url}/v2/models/${model.name}/infer`;
    const placed = config.env.SWITCHYARD_EXPERT_BALANCER__STRATEGY !== "off";
    const first = placed
      ? await waitFor("the first plan", async () => {
        const current = await json(`${url}/api/plan`);
        const fits = spec.budgetSlots === null || current.slots_per_backend <= spec.budgetSlots;
        return current.version >= 1 && fits ? current : undefined;
      }, { timeoutMs: 120_000, retryErrors: true, onTimeout: "resolve" })
      : undefined;
    const startupS = (performance.now() - spawned) / 1000;
    spec.log(
      `${spec.executor} ${config.name} seed ${spec.seed}: pool ready in ${startupS.toFixed(1)} s` +
        (first ? `, plan v${first.version} (${first.slots_per_backend} slots/backend)` : ""),
    );
    const watch = new PlanWatch(url);
    const driver = config.eplb
      ? new EplbDriver({ pool, adminToken: spec.pool.adminToken, model })
      : null;
    // Step 2: warm-up, until the plan has settled.
    await driver?.open();
    const warmStarted = performance.now();
    const warm = (durationS: number) =>
      closedLoop({
        url: path,
        requests: spec.workload(0),
        concurrency: spec.warmClients,
        durationS,
      });
    await warm(plan.warmS);
    for (;;) {
      const soFarS = (performance.now() - warmStarted) / 1000;
      const quietS = (Date.now() - (await watch.lastSwitchAt() ?? 0)) / 1000;
      if (quietS >= plan.settleS || soFarS >= plan.maxWarmS) break;
      await warm(Math.min(plan.settleS - quietS, plan.maxWarmS - soFarS) + 0.5);
    }
    // EPLB's first plan, on the warm-up's load, is in force before anything is measured.
    await driver?.replan();
    const healthBefore = await switchHealth(url);
    const warmedS = (performance.now() - warmStarted) / 1000;
    const measuredFrom = performance.now();
    const warmEndedAt = Date.now();
    driver?.every(eplbPeriodS(plan));
    const records: PhaseRecord[] = [];
    const measure = async (
      name: string,
      offer: { rps: number; fraction: number } | null,
      load: () => Promise<LoadResult>,
    ) => {
      const startS = (performance.now() - measuredFrom) / 1000;
      const before = await snapshot(pool);
      const result = await load();
      const after = await snapshot(pool);
      const hosted = placed ? await hosting(pool, after).catch(() => null) : null;
      records.push({
        name,
        offeredRps: offer?.rps ?? null,
        fraction: offer?.fraction ?? null,
        startS,
        result,
        pool: poolInterval(before, after, model, hosted),
      });
      return result;
    };
    // Step 3: idle and saturation.
    await measure(
      "idle",
      null,
      () =>
        closedLoop({
          url: path,
          requests: spec.workload(0),
          concurrency: 1,
          durationS: plan.idleS,
        }),
    );
    // The clients all start at once: the first `rampS` are a transient, not the capacity.
    const saturated = await measure("saturation", null, async () => {
      const whole = await closedLoop({
        url: path,
        requests: spec.workload(0),
        concurrency: spec.concurrency,
        durationS: plan.rampS + plan.saturationS,
      });
      return steadyPart(whole, plan.rampS);
    });
    const capacityRps = saturated.ok / Math.max(saturated.seconds, 1e-9);
    const base = spec.baseRps ?? capacityRps;
    const segments = mixSegments(plan);
    if (spec.openLoops) {
      // Step 4: the rate sweep on the first mix.
      for (const [i, fraction] of plan.rates.entries()) {
        await measure(`rate-${fraction}`, { rps: fraction * base, fraction }, () =>
          openLoop({
            url: path,
            requests: spec.workload(0),
            rate: fraction * base,
            durationS: plan.sweepS,
            burstiness: spec.burstiness,
            seed: spec.seed * 1000 + i,
          }));
      }
      // Step 5: the shift phase.
      const cursors = new Map<number, number>();
      await measure(
        "shift",
        { rps: plan.shiftRate * base, fraction: plan.shiftRate },
        () =>
          openLoop({
            url: path,
            rate: plan.shiftRate * base,
            durationS: plan.shiftS,
            burstiness: spec.burstiness,
            seed: spec.seed * 1000 + 999,
            nextRequest: (t) => {
              const mix = mixAt(segments, t);
              const requests = spec.workload(mix);
              const i = cursors.get(mix) ?? 0;
              cursors.set(mix, i + 1);
              return requests[i % requests.length]!;
            },
          }),
      );
    }
    const healthAfter = await switchHealth(url);
    const switching = healthBefore === null || healthAfter === null ? null : {
      count: healthAfter.count - healthBefore.count,
      seconds: healthAfter.seconds - healthBefore.seconds,
      movedBytes: healthAfter.movedBytes - healthBefore.movedBytes,
    };
    // Both on the measured clock: seconds after the warm-up (negative: during it).
    const measured = <T extends { at: number }>(item: T) => ({
      ...item,
      atS: (item.at - warmEndedAt) / 1000,
    });
    const replans = ((await driver?.stop()) ?? []).map(measured);
    const switches = (await watch.stop()).map(measured);
    return {
      executor: spec.executor,
      config: config.name,
      seed: spec.seed,
      startupS,
      warmedS,
      slots: first?.slots_per_backend ?? null,
      phases: records,
      switches,
      switching,
      replans,
      capacityRps,
      mixStartsS: segments.map((s) => s.startS),
    };
  } finally {
    await pool.close();
    spec.onPool?.(null);
  }
}
