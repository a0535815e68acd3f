/**
 * @module Collect-at-scrape metrics on a private prom-client registry: gauges and
 * counters whose samples are read from existing statistics when Prometheus scrapes, so
 * serving requests costs nothing. Also the `switchyard_build_info` and process memory
 * gauges both the router and the backends export. Never the default registry: its
 * Node.js metrics fail `promtool check metrics`.
 */
import { Counter, Gauge, type Registry } from "prom-client";

/** One sample: label values and the value. */
export interface Sample<L extends string> {
  labels: Partial<Record<L, string | number>>;
  value: number;
}

/** Options of {@linkcode collectedGauge} and {@linkcode collectedCounter}. */
export interface CollectedOptions<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  /** The samples now; may be async (the scrape awaits it). Series it omits disappear. */
  read: () => Sample<L>[] | Promise<Sample<L>[]>;
}

/**
 * A gauge whose samples are replaced on every scrape by `read()`. A gauge without
 * labels always has one sample (0 when `read` returns none).
 */
export function collectedGauge<L extends string>(
  registry: Registry,
  options: CollectedOptions<L>,
): Gauge<L> {
  return new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [registry],
    async collect() {
      const samples = await options.read();
      this.reset();
      for (const sample of samples) this.set(sample.labels, sample.value);
    },
  });
}

/**
 * A counter whose samples are copied on every scrape from cumulative statistics that
 * never decrease while the process runs (a restart resets them, as Prometheus expects).
 */
export function collectedCounter<L extends string>(
  registry: Registry,
  options: CollectedOptions<L>,
): Counter<L> {
  return new Counter<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [registry],
    async collect() {
      const samples = await options.read();
      this.reset();
      for (const sample of samples) this.inc(sample.labels, Math.max(0, sample.value));
    },
  });
}

/** `switchyard_build_info{version} 1`: which build a process runs. */
export function buildInfoGauge(registry: Registry, version: string): Gauge<"version"> {
  return collectedGauge(registry, {
    name: "switchyard_build_info",
    help: "Always 1; the version label names the Switchyard build this process runs.",
    labelNames: ["version"],
    read: () => [{ labels: { version }, value: 1 }],
  });
}

/** Memory readings of this process, in bytes. */
export interface ProcessMemory {
  rssBytes: number;
  heapUsedBytes: number;
}

/** Reads `Deno.memoryUsage()`. */
export function denoProcessMemory(): ProcessMemory {
  const { rss, heapUsed } = Deno.memoryUsage();
  return { rssBytes: rss, heapUsedBytes: heapUsed };
}

/** `switchyard_process_resident_memory_bytes` and `switchyard_process_heap_used_bytes`. */
export function processMemoryGauges(
  registry: Registry,
  memory: () => ProcessMemory = denoProcessMemory,
): void {
  collectedGauge(registry, {
    name: "switchyard_process_resident_memory_bytes",
    help: "Resident set size of this process in bytes.",
    read: () => [{ labels: {}, value: memory().rssBytes }],
  });
  collectedGauge(registry, {
    name: "switchyard_process_heap_used_bytes",
    help: "JavaScript heap in use by this process in bytes.",
    read: () => [{ labels: {}, value: memory().heapUsedBytes }],
  });
}
