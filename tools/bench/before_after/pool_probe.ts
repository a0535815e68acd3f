/**
 * @module What the before/after reads from a running pool between two moments: each
 * backend's raw load report (`/v2/load`: per-expert tokens, device busy time), the CPU
 * time of every process (router, backends and this load generator, from `/proc`), and
 * which experts the current plan hosts where (`/api/plan`). {@linkcode poolInterval}
 * turns two snapshots into the phase's load spread, device utilisation and host CPU.
 */
import type { LoadReport } from "../../../shared/load_report.ts";
import type { TestPool } from "../../pool/processes.ts";
import { processCpuMs } from "../cpu_time.ts";
import { json } from "../http_probe.ts";
import { backendLoads, logicalLoads, replicaLoads, spread } from "./expert_load.ts";

/** One moment of the pool. */
export interface PoolSnapshot {
  /** `performance.now()` of the snapshot (ms). */
  at: number;
  /** Load reports by the backends' own ids, in pool order. */
  reports: Map<string, LoadReport>;
  /** CPU ms so far of the router, each backend, and this process (the load generator). */
  cpuMs: { router: number; backends: number[]; generator: number };
}

/** Hosted experts per backend report id, `[layer] → experts`. */
export type Hosting = Map<string, number[][]>;

/** Reads every backend's load report and every process's CPU time. */
export async function snapshot(pool: TestPool): Promise<PoolSnapshot> {
  const auth = { authorization: `Bearer ${pool.token}` };
  const reports: LoadReport[] = await Promise.all(
    pool.backends.map((b) => json(`${b.url}/v2/load`, auth)),
  );
  const cpu = (pid: number) => {
    try {
      return processCpuMs(pid);
    } catch {
      return NaN; // exited: its share is unknown, never 0
    }
  };
  return {
    at: performance.now(),
    reports: new Map(reports.map((r) => [r.backend, r])),
    cpuMs: {
      router: cpu(pool.router.child.pid),
      backends: pool.backends.map((b) => cpu(b.child.pid)),
      generator: processCpuMs("self"),
    },
  };
}

/** The current plan's hosting by report id (backends matched by URL), or null without a plan. */
export async function hosting(pool: TestPool, at: PoolSnapshot): Promise<Hosting | null> {
  const plan = await json(`${pool.router.url}/api/plan`);
  if (!Array.isArray(plan.layers) || plan.layers.length === 0) return null;
  const idByUrl = new Map<string, string>();
  pool.backends.forEach((b, i) => {
    const id = [...at.reports.keys()][i];
    if (id !== undefined) idByUrl.set(b.url, id);
  });
  const urlById = new Map<string, string>(
    (plan.backends as { id: string; url: string }[]).map((b) => [b.id, b.url]),
  );
  const result: Hosting = new Map();
  plan.layers.forEach((layer: { hosted: { backend: string; experts: number[] }[] }, l: number) => {
    for (const { backend, experts } of layer.hosted) {
      const id = idByUrl.get(urlById.get(backend) ?? "");
      if (id === undefined) continue;
      const rows = result.get(id) ?? [];
      rows[l] = experts;
      result.set(id, rows);
    }
  });
  return result;
}

/** What a phase did to the pool, from two snapshots. */
export interface PoolInterval {
  seconds: number;
  /** Device (executor) busy share of each backend, 0–1 (busy time ÷ wall time × slots). */
  deviceBusy: number[];
  /** Cores used: the router, all backends together, the load generator. */
  cores: { router: number; backends: number; generator: number };
  /** Expert-load CV and balancedness across backends, mean over layers. */
  backendCv: number;
  backendBalancedness: number;
  /** Expert-load CV across hosted replicas (null without a plan), mean over layers. */
  replicaCv: number | null;
  /** Expert-load CV per logical expert (what the gate chose), mean over layers. */
  logicalCv: number;
}

/** The interval between `from` and `to` (pure). */
export function poolInterval(
  from: PoolSnapshot,
  to: PoolSnapshot,
  model: { layers: number; experts: number },
  hosted: Hosting | null,
): PoolInterval {
  const wallMs = Math.max(to.at - from.at, 1);
  const ids = [...to.reports.keys()];
  const perBackend = spread(backendLoads(model.layers, from.reports, to.reports));
  // Busy time over every execution place the backend has (`slots`).
  const busy = (id: string) => {
    const report = to.reports.get(id)!;
    const busyMs = report.busyMs - (from.reports.get(id)?.busyMs ?? 0);
    return Math.min(1, Math.max(0, busyMs / (wallMs * Math.max(1, report.slots))));
  };
  const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
  return {
    seconds: wallMs / 1000,
    deviceBusy: ids.map(busy),
    cores: {
      router: (to.cpuMs.router - from.cpuMs.router) / wallMs,
      backends: (sum(to.cpuMs.backends) - sum(from.cpuMs.backends)) / wallMs,
      generator: (to.cpuMs.generator - from.cpuMs.generator) / wallMs,
    },
    backendCv: perBackend.cv,
    backendBalancedness: perBackend.balancedness,
    replicaCv: hosted === null
      ? null
      : spread(replicaLoads(model.layers, hosted, from.reports, to.reports)).cv,
    logicalCv: spread(logicalLoads(model.experts, model.layers, from.reports, to.reports)).cv,
  };
}
