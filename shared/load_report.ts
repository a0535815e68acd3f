/**
 * @module The load report a backend serves about itself (`GET /v2/load`, internal):
 * cumulative counters per physical expert slot and per backend. Consumers diff two
 * reports to get rates; cumulative counters make a lost report harmless.
 */
import { z } from "zod";
import { PlanOwnerSchema } from "./plan_owner.ts";

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
  /** Routed experts: loads paid by requests since start (expert residency). */
  coldStarts: z.number().min(0).optional(),
  /** Routed experts: milliseconds those cold starts took, summed. */
  coldStartMs: z.number().min(0).optional(),
  /** Routed experts: the longest of those cold starts, ms. */
  coldStartMaxMs: z.number().min(0).optional(),
});

/**
 * Accelerator readings (`nvidia-smi` of the backend's own device: device-wide, not per
 * process). Each field is `null` when the tool answered `[N/A]` for any device.
 */
export const AcceleratorReadingSchema = z.object({
  /** Devices read. */
  devices: z.int().min(1),
  /** Mean utilisation over the devices, in [0, 1]. */
  utilisation: z.number().min(0).max(1).nullable(),
  memoryUsedBytes: z.number().min(0).nullable(),
  memoryTotalBytes: z.number().min(0).nullable(),
  /** Power draw of the devices read together (W). */
  powerW: z.number().min(0).nullable(),
  /**
   * UUIDs of the devices read (`GPU-…`); `null` when the tool did not name them. Backends
   * sharing a device report the same UUID: the router splits its power among them.
   * Optional so reports of older backends still parse.
   */
  deviceIds: z.array(z.string()).nullable().optional(),
});

/**
 * The backend process's resources: cumulative CPU time and network bytes (consumers diff
 * two reports, like the other counters) and the latest accelerator reading.
 */
export const ResourceReportSchema = z.object({
  /** Process CPU time since start, user + system, all threads (ms). */
  cpuMs: z.number().min(0),
  /** Body bytes received: HTTP request bodies and peer WebSocket frames. */
  netRxBytes: z.number().min(0),
  /** Body bytes sent: HTTP response bodies and peer WebSocket frames. */
  netTxBytes: z.number().min(0),
  /** `null` when no accelerator can be read (no `nvidia-smi`, or it failed). */
  accelerator: AcceleratorReadingSchema.nullable(),
  /** Accelerator power draw of this backend's device (W); `null` when not readable. Never estimated. */
  powerW: z.number().min(0).nullable(),
});

/**
 * The backend's host side and queues, cumulative like the other counters (the router's
 * saturation signal diffs two reports): event-loop lateness from a timer probe, and for
 * every batching queue together the time groups waited and the time executions took.
 */
export const HostReportSchema = z.object({
  /** Σ lateness of the event-loop probe timer (ms): the main thread was busy. */
  loopLagMs: z.number().min(0),
  /** Σ time the probe covered (ms). */
  loopElapsedMs: z.number().min(0),
  /** Groups that left a batching queue (all queues). */
  groups: z.number().min(0),
  /** Σ time those groups waited in their queue (ms). */
  queueDelayMs: z.number().min(0),
  /**
   * Σ of those waits' parts while every execution place was taken (ms): queueing proper,
   * without the batch filling or a just-answered wave regrouping. Optional so reports of
   * older backends still parse (the router then subtracts the batching window instead).
   */
  busyWaitMs: z.number().min(0).optional(),
  /** Executions the batching queues dispatched. */
  executions: z.number().min(0),
  /** Σ time those executions took (ms). */
  executionMs: z.number().min(0),
  /** The batching window now (ms): waiting up to it is deliberate, not queueing. */
  windowMs: z.number().min(0),
});

/**
 * Routed-expert residency: the memory budget (`null` unlimited), the bytes of warm
 * routed experts now, and the largest routed expert's bytes (what the router's planner
 * sizes slots with, so no plan exceeds the budget).
 */
export const ResidencyReportSchema = z.object({
  budgetBytes: z.number().min(0).nullable(),
  usedBytes: z.number().min(0),
  expertBytes: z.number().min(0),
});

/**
 * The expert channel (peer hops), cumulative. Entry side: request layers whose rows
 * crossed to peers, the rows sent, the hop wall time, the part of it requests waited
 * with none of their own local work running (`exposedMs`: the rest hid under their local
 * work), the part during which the executor ran any work (`coveredMs`: hidden behind
 * computation, this request's or others'), the peers' own serving time inside it, and
 * this side's host-thread ms packing
 * frames and reading answers. Peer side: frames and rows served for others and the
 * host-thread ms spent decoding and answering them. The router's planner prices a
 * remote row from these.
 */
export const PeerReportSchema = z.object({
  hops: z.number().min(0),
  rowsSent: z.number().min(0),
  hopMs: z.number().min(0),
  exposedMs: z.number().min(0),
  /** Σ hop time during which this backend's executor ran anything (its own or others' work). */
  coveredMs: z.number().min(0),
  peerServeMs: z.number().min(0),
  sendCpuMs: z.number().min(0),
  framesServed: z.number().min(0),
  rowsServed: z.number().min(0),
  serveCpuMs: z.number().min(0),
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
  /** Node resources; optional so reports of older backends still parse. */
  resources: ResourceReportSchema.optional(),
  /** Host side and queues; optional so reports of older backends still parse. */
  host: HostReportSchema.optional(),
  /** Routed-expert residency; optional so reports of older backends still parse. */
  residency: ResidencyReportSchema.optional(),
  /**
   * Placement plan versions this backend runs (`active`) and has loaded for a switch
   * (`staged`), `null` when none; the router reconciles them with its current plan.
   * Optional so reports of older backends still parse.
   */
  plan: z.object({
    active: z.int().min(1).nullable(),
    staged: z.int().min(1).nullable(),
    /** The pool and leader term this backend follows (`null`: unclaimed); optional for older backends. */
    owner: PlanOwnerSchema.nullable().optional(),
  }).optional(),
  /** Peer hops; optional so reports of older backends (and the per-expert path) still parse. */
  peer: PeerReportSchema.optional(),
});

/** A backend's load report. */
export type LoadReport = z.infer<typeof LoadReportSchema>;

/** Node resources in a load report. */
export type ResourceReport = z.infer<typeof ResourceReportSchema>;

/** Routed-expert residency in a load report. */
export type ResidencyReport = z.infer<typeof ResidencyReportSchema>;

/** Peer hops in a load report. */
export type PeerReport = z.infer<typeof PeerReportSchema>;

/** Host side and queues in a load report. */
export type HostReport = z.infer<typeof HostReportSchema>;

/** Accelerator readings in a load report. */
export type AcceleratorReading = z.infer<typeof AcceleratorReadingSchema>;

/** One part's counters in a load report. */
export type PartLoad = z.infer<typeof PartLoadSchema>;
