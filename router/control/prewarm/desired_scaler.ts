/**
 * @module The `kubernetes` scaler: publishes the desired backend count the way operators
 * scale on Kubernetes — KEDA's `metrics-api` scaler reads `GET /api/prewarm/desired`
 * (`desired_replicas`), an HPA on an external metric reads the Prometheus gauge
 * `switchyard_prewarm_desired_backends` (through prometheus-adapter); with a target of 1
 * per replica either sets the StatefulSet's replicas to the value (deploy/kubernetes/
 * autoscaling/). New pods join through discovery (DNS); a scale-down is published only
 * after the job drained the backend, and a StatefulSet removes its highest ordinal —
 * the newest backend, the one the job drains first.
 */
import type { Scaler, ScaleRequest, ScalerOutcome } from "./prewarm_types.ts";
import { changeOf } from "./scalers.ts";

/** Holds the desired count for KEDA / HPA to read; see the module doc. */
export class DesiredReplicasScaler implements Scaler {
  readonly name = "kubernetes";
  readonly acts = true;
  #desired: number | null = null;
  #readyBy: number | null = null;

  constructor(initial: number | null = null) {
    this.#desired = initial;
  }

  scale(request: ScaleRequest): Promise<ScalerOutcome> {
    const changed = request.target !== this.#desired;
    this.#desired = request.target;
    this.#readyBy = request.readyBy;
    return Promise.resolve({
      scaler: this.name,
      status: changed ? "published" : "unchanged",
      detail: `desired_replicas ${request.target} (${changeOf(request)})`,
    });
  }

  /** The desired backend count; null before the first request. */
  desired(): number | null {
    return this.#desired;
  }

  /** When the desired count must be ready (ms since the epoch); null: no deadline. */
  readyBy(): number | null {
    return this.#readyBy;
  }
}
