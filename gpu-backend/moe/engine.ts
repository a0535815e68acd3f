/**
 * @module The backend's inference engine: admission control in front of the MoE
 * forward pass.
 *
 * Work is bounded by rows in flight: a request that would push the backend past
 * `maxQueuedRows` is refused at once with 503 + Retry-After instead of queueing, so
 * memory stays bounded and the router can send it elsewhere.
 */
import { ApiError } from "../../shared/errors.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import { forwardMoe, type MoeForwardResult, type PartRunner } from "./forward.ts";

/** Options of {@linkcode MoeEngine}. */
export interface MoeEngineOptions {
  manifest: ModelManifest;
  runner: PartRunner;
  temperature: number;
  /** Rows admitted at once; beyond it requests get 503. */
  maxQueuedRows: number;
}

/** Engine counters. */
export interface EngineStats {
  inFlightRequests: number;
  inFlightRows: number;
  requests: number;
  rows: number;
  rejected: number;
  failed: number;
}

/** Admits, runs and counts inference requests. */
export class MoeEngine {
  readonly manifest: ModelManifest;
  readonly #options: MoeEngineOptions;
  readonly #stats: EngineStats = {
    inFlightRequests: 0,
    inFlightRows: 0,
    requests: 0,
    rows: 0,
    rejected: 0,
    failed: 0,
  };

  constructor(options: MoeEngineOptions) {
    this.manifest = options.manifest;
    this.#options = options;
  }

  /** Runs a forward pass on `tokens` (`[rows, d_model]`); 503 when over capacity. */
  async infer(tokens: Float32Array, rows: number): Promise<MoeForwardResult> {
    const stats = this.#stats;
    if (stats.inFlightRows > 0 && stats.inFlightRows + rows > this.#options.maxQueuedRows) {
      stats.rejected++;
      throw new ApiError(
        "overloaded",
        `Cannot run inference: backend is at capacity (${stats.inFlightRows} rows in flight, backend.max_queued_rows ${this.#options.maxQueuedRows})`,
        { retryAfterS: 1 },
      );
    }
    stats.inFlightRequests++;
    stats.inFlightRows += rows;
    try {
      const result = await forwardMoe(tokens, rows, {
        manifest: this.manifest,
        runner: this.#options.runner,
        temperature: this.#options.temperature,
      });
      stats.requests++;
      stats.rows += rows;
      return result;
    } catch (error) {
      stats.failed++;
      throw error;
    } finally {
      stats.inFlightRequests--;
      stats.inFlightRows -= rows;
    }
  }

  /** A snapshot of the counters. */
  stats(): EngineStats {
    return { ...this.#stats };
  }
}
