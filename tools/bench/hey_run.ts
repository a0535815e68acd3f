/**
 * @module Runs `hey` (a Go load generator nobody here wrote: keep-alive connections, one
 * request at a time per worker, `-q` requests/s per worker) against one URL with a fixed
 * body, and parses what it prints: requests by status, errors, and the process's own CPU.
 */
import { processCpuMs } from "./cpu_time.ts";

/** Options of {@linkcode runHey}. */
export interface HeyOptions {
  url: string;
  /** Workers (`-c`). */
  concurrency: number;
  /** Requests per second per worker (`-q`); absent: closed loop, as fast as answers come. */
  ratePerWorker?: number;
  durationS: number;
  /** JSON body (`-D` file) sent with POST. */
  bodyFile: string;
  /** Called with hey's pid once it runs (to sample its CPU). */
  onStart?: (pid: number) => void;
}

/** What one hey run measured. */
export interface HeyResult {
  /** Responses by HTTP status. */
  statuses: Record<string, number>;
  /** Requests that got no HTTP answer (connection errors, timeouts), by message. */
  errors: Record<string, number>;
  /** 200 answers per second over the run. */
  goodputPerS: number;
  /** Everything hey sent per second (answered or not). */
  sentPerS: number;
  /** hey's own CPU time (ms). */
  cpuMs: number;
  durationS: number;
  command: string;
}

/** Parses hey's text report. */
export function parseHey(text: string, durationS: number): Omit<HeyResult, "cpuMs" | "command"> {
  const statuses: Record<string, number> = {};
  for (const match of text.matchAll(/\[(\d{3})\]\s+(\d+) responses/g)) {
    statuses[match[1]!] = Number(match[2]);
  }
  const errors: Record<string, number> = {};
  const errorBlock = text.split("Error distribution:")[1] ?? "";
  for (const match of errorBlock.matchAll(/\[(\d+)\]\s+(.+)/g)) {
    const message = match[2]!.replace(/\d+\.\d+\.\d+\.\d+:\d+/g, "<addr>").slice(0, 120);
    errors[message] = (errors[message] ?? 0) + Number(match[1]);
  }
  const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
  const failed = Object.values(errors).reduce((a, b) => a + b, 0);
  return {
    statuses,
    errors,
    goodputPerS: (statuses["200"] ?? 0) / durationS,
    sentPerS: (answered + failed) / durationS,
    durationS,
  };
}

/** Runs hey once; see the module doc. */
export async function runHey(options: HeyOptions): Promise<HeyResult> {
  const args = [
    "-z",
    `${options.durationS}s`,
    "-c",
    String(options.concurrency),
    ...(options.ratePerWorker ? ["-q", String(options.ratePerWorker)] : []),
    "-m",
    "POST",
    "-T",
    "application/json",
    "-D",
    options.bodyFile,
    "-t",
    "30",
    options.url,
  ];
  const child = new Deno.Command("hey", { args, stdout: "piped", stderr: "piped" }).spawn();
  options.onStart?.(child.pid);
  let cpuMs = 0;
  // Sample hey's CPU until it exits (its /proc entry is gone once it has been reaped).
  const sampler = setInterval(() => {
    try {
      cpuMs = processCpuMs(child.pid);
    } catch { /* exited */ }
  }, 250);
  const output = await child.output();
  clearInterval(sampler);
  const text = new TextDecoder().decode(output.stdout);
  if (!output.success) {
    throw new Error(`hey failed: ${new TextDecoder().decode(output.stderr).slice(0, 500)}`);
  }
  return {
    ...parseHey(text, options.durationS),
    cpuMs,
    command: `hey ${args.join(" ")}`,
  };
}
