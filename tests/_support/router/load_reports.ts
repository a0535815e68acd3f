/**
 * @module Test helper: load reports as a backend serving model "tiny" (2 layers,
 * 4 experts, 1 shared expert) would send them, built from a few cumulative counters.
 */
import type {
  HostReport,
  LoadReport,
  PartLoad,
  ResourceReport,
} from "../../../shared/load_report.ts";

/** Cumulative counters of one fake report. */
export interface FakeReportOptions {
  backend?: string;
  model?: string;
  /** Report time (ms since the Unix epoch). */
  at: number;
  /** Default: `at - 1_700_000_000_000 + 60_000` (started one minute before the epoch base). */
  uptimeMs?: number;
  slots?: number;
  busyMs?: number;
  requests?: number;
  tokens?: number;
  inFlight?: number;
  /** `[layer][expert]` → tokens routed to that expert so far; default 2 layers × 4 zeros. */
  expertTokens?: number[][];
  /** Groups queued per routed expert part, same for all; default 0. */
  queueDepth?: number;
  /** Node resources; default none (as an older backend sends). */
  resources?: ResourceReport;
  /** Host side and queues; default none (as an older backend sends). */
  host?: HostReport;
  /** Requests refused so far; default 0. */
  rejected?: number;
}

/** A report of model "tiny" with the given cumulative counters. */
export function fakeLoadReport(options: FakeReportOptions): LoadReport {
  const expertTokens = options.expertTokens ?? [[0, 0, 0, 0], [0, 0, 0, 0]];
  const parts: PartLoad[] = expertTokens.flatMap((experts, layer) => [
    {
      part: `L${layer}/gate`,
      layer,
      kind: "gate" as const,
      expert: -1,
      tokens: options.tokens ?? 0,
      executions: 0,
      busyMs: 0,
      queueDepth: 0,
    },
    ...experts.map((tokens, expert) => ({
      part: `L${layer}/E${expert}`,
      layer,
      kind: "expert" as const,
      expert,
      tokens,
      executions: tokens,
      busyMs: tokens * 0.1,
      queueDepth: options.queueDepth ?? 0,
    })),
    {
      part: `L${layer}/S0`,
      layer,
      kind: "shared" as const,
      expert: 0,
      tokens: options.tokens ?? 0,
      executions: 0,
      busyMs: 0,
      queueDepth: 0,
    },
  ]);
  return {
    backend: options.backend ?? "backend-1",
    model: options.model ?? "tiny",
    at: options.at,
    uptimeMs: options.uptimeMs ?? options.at - 1_700_000_000_000 + 60_000,
    executionProvider: "cpu",
    slots: options.slots ?? 2,
    busyMs: options.busyMs ?? 0,
    requests: options.requests ?? 0,
    tokens: options.tokens ?? 0,
    inFlightRequests: options.inFlight ?? 0,
    inFlightRows: options.inFlight ?? 0,
    rejected: options.rejected ?? 0,
    memory: { rssBytes: 1_000_000, heapUsedBytes: 500_000 },
    parts,
    ...(options.resources ? { resources: options.resources } : {}),
    ...(options.host ? { host: options.host } : {}),
  };
}
