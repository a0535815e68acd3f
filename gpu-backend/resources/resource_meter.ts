/**
 * @module The `resources` part of a backend's load report: process CPU time, network
 * body bytes and the latest accelerator reading, read in O(1) from sources kept current
 * elsewhere (the OS, {@linkcode NetCounter}, {@linkcode NvidiaSmiSampler}).
 *
 * Power comes from the accelerator reading only: a host without a readable power sensor
 * reports `powerW: null`, never an estimate.
 */
import process from "node:process";
import type { AcceleratorReading, ResourceReport } from "../../shared/load_report.ts";
import type { NetCounter } from "./net_counter.ts";

/** CPU time of the process since it started, µs (the shape of `process.cpuUsage()`). */
export interface CpuUsage {
  user: number;
  system: number;
}

/** What {@linkcode readResources} reads. */
export interface ResourceSources {
  net: Pick<NetCounter, "rxBytes" | "txBytes">;
  /** The latest accelerator reading (`null`: none). */
  accelerator: { readonly reading: AcceleratorReading | null };
  /** Default: `process.cpuUsage` (all threads, Workers included). */
  cpuUsage?: () => CpuUsage;
}

/** The process's resources now. */
export function readResources(sources: ResourceSources): ResourceReport {
  const cpu = (sources.cpuUsage ?? process.cpuUsage)();
  const accelerator = sources.accelerator.reading;
  return {
    cpuMs: (cpu.user + cpu.system) / 1000,
    netRxBytes: sources.net.rxBytes,
    netTxBytes: sources.net.txBytes,
    accelerator,
    powerW: accelerator?.powerW ?? null,
  };
}
