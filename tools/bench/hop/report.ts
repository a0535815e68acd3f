/**
 * @module The `bench:hop` report: per target and request size the throughput and CPU
 * figures, the protocol that costs the router least, and the codec steps' costs.
 */
import { formatTable, quantile, round } from "../stats.ts";
import type { CodecCost } from "./codec_costs.ts";

/** One target × size, summed over rounds. */
export interface HopCell {
  target: string;
  size: string;
  ok: number;
  errors: number;
  rows: number;
  seconds: number;
  backendCpuMs: number;
  /** 0 for the backend called directly. */
  routerCpuMs: number;
  latencies: number[];
}

/** Everything one run measured. */
export interface HopReport {
  command: string;
  model: string;
  cores: number;
  clients: number;
  durationS: number;
  rounds: number;
  /** Tokens/s one core computes (MatMul at batch 256 ÷ FLOPs per token). */
  limitTokensPerS: number;
  cells: HopCell[];
  codec: CodecCost[];
}

/** Tokens per CPU-second of backend + router. */
export function tokensPerCpuS(cell: HopCell): number {
  return cell.rows / ((cell.backendCpuMs + cell.routerCpuMs) / 1000);
}

/** Router CPU ms per answered request. */
export function routerMsPerRequest(cell: HopCell): number {
  return cell.routerCpuMs / Math.max(1, cell.ok);
}

/** The router target with the least router CPU per request, per size. */
export function bestProtocol(cells: readonly HopCell[]): Map<string, string> {
  const best = new Map<string, HopCell>();
  for (const cell of cells) {
    if (!cell.target.startsWith("via router")) continue;
    const current = best.get(cell.size);
    if (current === undefined || routerMsPerRequest(cell) < routerMsPerRequest(current)) {
      best.set(cell.size, cell);
    }
  }
  return new Map([...best].map(([size, cell]) => [size, cell.target]));
}

/** The report as Markdown (the command first). */
export function formatHopReport(r: HopReport): string {
  const rows = r.cells.map((cell) => {
    const perCpu = tokensPerCpuS(cell);
    return [
      cell.target,
      cell.size,
      Math.round(cell.rows / cell.seconds),
      Math.round(perCpu),
      round((100 * perCpu) / r.limitTokensPerS, 1),
      cell.routerCpuMs > 0 ? round(routerMsPerRequest(cell), 3) : "",
      round(cell.backendCpuMs / Math.max(1, cell.ok), 3),
      round(quantile(cell.latencies, 0.5), 1),
      round(quantile(cell.latencies, 0.99), 1),
      cell.errors,
    ];
  });
  const codec = r.codec.map((c) => [c.step, c.variant, round(c.usPerRequest, 2)]);
  const best = [...bestProtocol(r.cells)].map(([size, target]) => `${size}: ${target}`);
  return [
    "# bench:hop",
    "",
    `Command: \`${r.command}\``,
    "",
    `Model ${r.model}. Machine: ${r.cores} cores, shared by the load generator and the serving`,
    `processes. Closed loop, ${r.clients} clients, ${r.rounds} rounds × ${r.durationS} s per cell`,
    "(targets in rotating order). Limit: " + Math.round(r.limitTokensPerS) +
    " tokens/s per core (single-thread MatMul at batch 256).",
    "",
    "```",
    formatTable([
      "target",
      "size",
      "tokens/s",
      "tokens/CPU-s",
      "% limit",
      "router ms/req",
      "backend ms/req",
      "p50 ms",
      "p99 ms",
      "errors",
    ], rows),
    "```",
    "",
    "tokens/CPU-s: tokens answered per CPU-second of backend (+ that router), from",
    "`/proc/<pid>/stat`; router/backend ms/req: CPU milliseconds per answered request.",
    "",
    `Least router CPU per request: ${best.join("; ")}.`,
    "",
    "Codec steps in process (demo mix, µs per request, best of 5 interleaved passes):",
    "",
    "```",
    formatTable(["step", "variant", "µs/request"], codec),
    "```",
  ].join("\n");
}
