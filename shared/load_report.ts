/**
 * @module The load report a backend serves about itself (`GET /v2/load`, internal):
 * cumulative counters per physical expert slot and per backend. Consumers diff two
 * reports to get rates; cumulative counters make a lost report harmless.
 */
import { z } from "zod";

/** Counters of one hosted model part (routed expert, shared expert or gate). */
export const PartLoadSchema = z.object({
  /** `L{layer}/E{expert}`, `L{layer}/S{expert}` or `L{layer}/gate`. */
  part: z.string(),
  layer: z.int().min(0),
  kind: z.enum(["gate", "expert", "shared"]),
  /** Logical expert id (routed and shared experts); -1 for gates. */
  expert: z.int().min(-1),
  /** Rows (tokens) executed since start. */
  tokens: z.number().min(0),
  executions: z.number().min(0),
  /** Device milliseconds spent executing since start. */
  busyMs: z.number().min(0),
  /** Groups waiting now. */
  queueDepth: z.int().min(0),
});

/** One backend's load report. */
export const LoadReportSchema = z.object({
  backend: z.string(),
  model: z.string(),
  /** Milliseconds since the Unix epoch when the report was taken. */
  at: z.number(),
  /** Milliseconds since the backend started (for rates across restarts). */
  uptimeMs: z.number().min(0),
  executionProvider: z.string(),
  /** Executor slots (Workers). */
  slots: z.int().min(1),
  /** Device milliseconds spent executing since start, all slots together. */
  busyMs: z.number().min(0),
  requests: z.number().min(0),
  tokens: z.number().min(0),
  inFlightRequests: z.int().min(0),
  inFlightRows: z.int().min(0),
  rejected: z.number().min(0),
  memory: z.object({ rssBytes: z.number().min(0), heapUsedBytes: z.number().min(0) }),
  parts: z.array(PartLoadSchema),
});

/** A backend's load report. */
export type LoadReport = z.infer<typeof LoadReportSchema>;
/** One part's counters in a load report. */
export type PartLoad = z.infer<typeof PartLoadSchema>;
