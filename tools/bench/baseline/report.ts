/**
 * @module The `bench:baseline` report: the limit line, one row per path × size ×
 * variant, new ÷ old ratios, p50 at the lowest load and the plan-switch rebuild — as
 * plain text (written to `docs/results/` with its command line).
 */
import type { ModelManifest } from "../../../shared/model_manifest.ts";
import type { LoadResult } from "../load_generator.ts";
import {
  type LayerWaves,
  rowsPerExpertPerWave,
} from "../../../gpu-backend/layer/layer_counters.ts";
import { formatTable, round, summarize } from "../stats.ts";

/** One measured cell. */
export interface Cell {
  path: string;
  size: string;
  variant: string;
  result: LoadResult;
  /** CPU ms of the serving processes (router included on the router path). */
  cpuMs: number;
  /** Backend CPU ms alone (default: `cpuMs`). */
  backendCpuMs?: number;
  /** Milliseconds inside onnxruntime runs. */
  busyMs: number;
  /** onnxruntime runs. */
  executions: number;
  routerMsPerRequest?: number;
  /** Layer path: how full its executions ran in this cell. */
  waves?: LayerWaves[];
}

/** Everything one run measured. */
export interface Report {
  command: string;
  manifest: ModelManifest;
  cores: number;
  cpu: string;
  clients: number;
  durationS: number;
  meanRows: { size: string; rows: number }[];
  limit: { gflops: number; flopsPerToken: number; tokensPerS: number };
  cells: Cell[];
  lowLoad: { path: string; variant: string; p50: number }[];
  rebuilds: { variant: string; ms: number; experts: number; startBuildMs: number[] }[];
}

/** Tokens per CPU-second of the serving processes. */
export function tokensPerCpuS(cell: Cell): number {
  return cell.result.rows / (cell.cpuMs / 1000);
}

/** The report as text. */
export function formatReport(r: Report): string {
  const m = r.manifest;
  const limit = r.limit.tokensPerS;
  const lines: string[] = [];
  lines.push(`# bench:baseline`);
  lines.push("");
  lines.push(`Command: \`${r.command}\``);
  lines.push("");
  lines.push(
    `Model ${m.name}: ${m.layers} layers × ${m.experts} experts, top-${m.top_k}, ${m.shared_experts} shared, ` +
      `d_model ${m.d_model}, d_ff ${m.d_ff}. Machine: ${r.cores} cores (${r.cpu}), shared by the load ` +
      `generator and the serving processes. Closed loop, ${r.clients} clients, ${r.durationS} s per cell; ` +
      `mean rows per request: ${
        r.meanRows.map((x) => `${x.size} ${round(x.rows, 2)}`).join(", ")
      }.`,
  );
  lines.push("");
  lines.push(
    `Limit: single-thread onnxruntime MatMul at batch 256 per CPU-second, the better of ` +
      `[256, ${m.d_model}]·[${m.d_model}, ${m.d_ff}] and [256, ${m.d_ff}]·[${m.d_ff}, ${m.d_model}]: ` +
      `${round(r.limit.gflops, 1)} GFLOP/s; ` +
      `the model needs ${round(r.limit.flopsPerToken / 1e6, 3)} MFLOP per token → **${
        round(limit, 0)
      } tokens/s per core**.`,
  );
  lines.push("");
  lines.push("```");
  lines.push(formatTable(
    [
      "path",
      "size",
      "execution",
      "tokens/s",
      "tokens/CPU-s",
      "% limit",
      "p50 ms",
      "p99 ms",
      "errors",
      "in ORT %",
      "runs/req",
      "router ms/req",
      "rows/wave",
      "rows/expert/wave",
    ],
    r.cells.map((cell) => {
      const s = summarize(cell.result.latencies);
      const backendCpu = cell.backendCpuMs ?? cell.cpuMs;
      return [
        cell.path,
        cell.size,
        cell.variant,
        round(cell.result.rows / cell.result.seconds, 0),
        round(tokensPerCpuS(cell), 0),
        round((100 * tokensPerCpuS(cell)) / limit, 1),
        round(s.p50, 1),
        round(s.p99, 1),
        cell.result.errors,
        round((100 * cell.busyMs) / Math.max(1, backendCpu), 0),
        round(cell.executions / Math.max(1, cell.result.ok), 2),
        cell.routerMsPerRequest === undefined ? "" : round(cell.routerMsPerRequest, 2),
        ...waveColumns(cell.waves),
      ];
    }),
  ));
  lines.push("```");
  lines.push("");
  lines.push(
    "tokens/CPU-s: tokens answered per CPU-second of the serving processes (backend; + router on " +
      "the router path; this process for the engine in process), from `/proc/<pid>/stat`. % limit: " +
      "that ÷ the limit. in ORT %: the backend's time inside onnxruntime runs ÷ its CPU time (the rest " +
      "is HTTP, decoding, routing, batching, thread crossings; with Workers it is their wall time and " +
      "exceeds 100 % when they wait for a core). runs/req: onnxruntime runs per request. " +
      "rows/wave (layer path): input rows per layer execution; rows/expert/wave: routed " +
      "assignments ÷ hosted experts per layer execution — the rows each expert's MatMuls see " +
      "(`deno task bench:kernel` measures onnxruntime at those row counts).",
  );
  lines.push("");
  lines.push("New ÷ old, tokens per CPU-second:");
  lines.push("");
  lines.push("```");
  const old = r.cells.filter((c) => c.variant.endsWith("(old)"));
  const rows: (string | number)[][] = [];
  for (const base of old) {
    for (
      const cell of r.cells.filter((c) =>
        c.path === base.path && c.size === base.size && c !== base
      )
    ) {
      rows.push([
        base.path,
        base.size,
        cell.variant,
        round(tokensPerCpuS(cell) / tokensPerCpuS(base), 2) + "×",
      ]);
    }
  }
  lines.push(formatTable(["path", "size", "execution", "÷ old"], rows));
  lines.push("```");
  lines.push("");
  lines.push("p50 at the lowest load (one client, demo mix):");
  lines.push("");
  lines.push("```");
  lines.push(
    formatTable(
      ["path", "execution", "p50 ms"],
      r.lowLoad.map((x) => [x.path, x.variant, round(x.p50, 2)]),
    ),
  );
  lines.push("```");
  if (r.rebuilds.length > 0) {
    lines.push("");
    lines.push(
      "Plan-switch rebuild (staging a plan that hosts " +
        `${
          r.rebuilds[0]!.experts
        } of ${m.experts} experts per layer here; all layers, composed and loaded while serving):`,
    );
    lines.push("");
    lines.push("```");
    lines.push(formatTable(
      ["execution", "rebuild ms", "start-up build ms per layer (all experts)"],
      r.rebuilds.map((x) => [x.variant, round(x.ms, 0), x.startBuildMs.join(", ")]),
    ));
    lines.push("```");
  }
  return lines.join("\n");
}

/** rows/wave and rows/expert/wave of a cell (blank when it has no layer executions). */
function waveColumns(waves: readonly LayerWaves[] | undefined): (string | number)[] {
  const executions = (waves ?? []).reduce((sum, w) => sum + w.executions, 0);
  if (!waves || executions === 0) return ["", ""];
  const rows = waves.reduce((sum, w) => sum + w.rows, 0);
  return [round(rows / executions, 1), round(rowsPerExpertPerWave(waves), 2)];
}
