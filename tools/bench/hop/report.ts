/**
 * @module The `bench:hop` report: per target and request size the throughput and CPU
 * figures, the protocol that costs the router least, and the codec steps' costs.
 */
import { formatTable, quantile, round } from "../stats.ts";
import type { CodecCost } from "./codec_costs.ts";
import type { ProcessProfile } from "./profile_run.ts";

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
  /** `--profile`: main-thread CPU split of router and backend. */
  profiles?: ProcessProfile[];
}

/** Tokens per CPU-second of backend + router. */
export function tokensPerCpuS(cell: HopCell): number {
  return cell.rows / ((cell.backendCpuMs + cell.routerCpuMs) / 1000);
}

/** Router CPU ms per answered request. */
export function routerMsPerRequest(cell: HopCell): number {
  return cell.routerCpuMs / Math.max(1, cell.ok);
}

/** Per size, the router target that scores best (default: least router CPU per request). */
export function bestProtocol(
  cells: readonly HopCell[],
  score: (cell: HopCell) => number = (cell) => -routerMsPerRequest(cell),
): Map<string, string> {
  const best = new Map<string, HopCell>();
  for (const cell of cells) {
    if (!cell.target.startsWith("via router")) continue;
    const current = best.get(cell.size);
    if (current === undefined || score(cell) > score(current)) best.set(cell.size, cell);
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
  const mostTokens = [...bestProtocol(r.cells, tokensPerCpuS)].map(([size, target]) =>
    `${size}: ${target}`
  );
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
    `Most tokens per server CPU-second: ${mostTokens.join("; ")}.`,
    "",
    "Codec steps in process (demo mix, µs per request, best of 5 interleaved passes):",
    "",
    "```",
    formatTable(["step", "variant", "µs/request"], codec),
    "```",
    ...(r.profiles ? formatProfiles(r.profiles) : []),
  ].join("\n");
}

function formatProfiles(profiles: readonly ProcessProfile[]): string[] {
  const lines = [
    "",
    "Where the CPU goes (`--profile`: a fresh router and backend under `deno run --cpu-prof`,",
    "demo mix through the router; main-thread samples, start-up left out, % of the sampled busy",
    "time). The backend runs onnxruntime on its main thread (`backend.executors: 0`), so its",
    "onnxruntime bucket is kernel time plus the binding's tensor handling; \"inside onnxruntime",
    "runs\" is the executor's wall time in `session.run()` (it includes waiting for a core on a",
    "busy machine) next to the process's CPU from `/proc`:",
  ];
  for (const p of profiles) {
    const busy = p.buckets.reduce((sum, b) => sum + b.ms, 0);
    const ort = p.ortMsPerRequest !== undefined
      ? `, inside onnxruntime runs ${round(p.ortMsPerRequest, 3)} ms/request (${
        round((100 * p.ortMsPerRequest) / p.cpuMsPerRequest, 0)
      } % of its CPU)`
      : "";
    lines.push(
      "",
      `${p.process}: ${round(p.cpuMsPerRequest, 3)} CPU ms/request (/proc)${ort}`,
      "",
      "```",
      formatTable(
        ["bucket", "ms", "%"],
        p.buckets.filter((b) => b.ms > 0).sort((a, b) => b.ms - a.ms).map((b) => [
          b.name,
          Math.round(b.ms),
          round((100 * b.ms) / busy, 1),
        ]),
      ),
      "```",
    );
  }
  return lines;
}
