/**
 * @module What the backend's Hono app is made of, injected: config, engine, readiness, the
 * load report, placement, peers, metrics and the input recorder.
 */
import type { BackendConfig } from "../../shared/config.ts";
import type { InputFaults } from "../../shared/input_faults.ts";
import type { LoadReport } from "../../shared/load_report.ts";
import type { Logger } from "../../shared/logger.ts";
import type { InputRecorder } from "../advice/input_recorder.ts";
import type { MoeEngine } from "../engine/engine.ts";
import type { BackendMetrics } from "../metrics/backend_metrics.ts";
import type { PhaseHistogram } from "../metrics/phase_histogram.ts";
import type { PeerRegistry } from "../peer/peer_registry.ts";
import type { PlacementState } from "../placement/placement_state.ts";
import type { BackendPhase } from "../timing/request_timing.ts";

/** Dependencies of `createBackendApp()` (`app.ts`). */
export interface BackendAppDeps {
  config: BackendConfig;
  backendId: string;
  engine: MoeEngine;
  /** Readiness and its details (provider, executors, queue). */
  readiness: () => { ready: boolean; details: Record<string, unknown> };
  /** This backend's load report now (`GET /v2/load`). */
  loadReport: () => LoadReport;
  logger: Logger;
  placement: PlacementState;
  peers: PeerRegistry;
  /** Active execution provider; `simulated` marks every inference response. */
  executionProvider?: string;
  /** Serves `GET /metrics` (Prometheus text, behind the internal token) when present. */
  metrics?: Pick<BackendMetrics, "contentType" | "render">;
  /** Samples served input rows for the gate-bias evaluation; default a 256-row recorder. */
  inputRecorder?: InputRecorder;
  /** Counts clients that disconnect mid-body and bodies past `limits.body_timeout`. */
  inputFaults?: InputFaults;
  /** Hears every answered request's phases (`switchyard_backend_request_phase_seconds`). */
  phases?: PhaseHistogram<BackendPhase>;
}
