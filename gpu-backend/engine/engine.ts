/**
 * @module The backend's inference engine: admission control in front of the MoE
 * forward pass — per layer executable (`layers`, the default path) or per expert part
 * (`runner`, the old path: simulated executors and the baseline benchmark).
 *
 * Work is bounded by rows in flight: a request that would push the backend past
 * `maxQueuedRows` is refused at once with 503 + Retry-After instead of queueing, so
 * memory stays bounded and the router can send it elsewhere.
 */
import { ApiError } from "../../shared/errors.ts";
import type { ModelManifest } from "../../shared/model_manifest.ts";
import {
  parseRoutingBias,
  type RoutingBiasSummary,
  summarizeRoutingBias,
} from "../moe/active_bias.ts";
import { forwardLayers } from "./layer_forward.ts";
import type { LayerPath } from "../layer/layer_path.ts";
import type { PartRunner } from "../batching/part_runner.ts";
import type { RequestTiming } from "../timing/request_timing.ts";
import { forwardMoe, type MoeForwardOptions, type MoeForwardResult } from "./expert_forward.ts";

/** Options of {@linkcode MoeEngine}: exactly one of `layers` and `runner`. */
export type MoeEngineOptions = {
  manifest: ModelManifest;
  temperature: number;
  /** Rows admitted at once; beyond it requests get 503. */
  maxQueuedRows: number;
} & ({ layers: LayerPath; runner?: undefined } | { runner: PartRunner; layers?: undefined });

type ForwardOptions = Pick<MoeForwardOptions, "bias" | "onGateLogits" | "temperature" | "timing">;

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
  /** Live routing-only bias per layer; `undefined` = none (outputs as without it). */
  #bias: Float32Array[] | undefined;

  constructor(options: MoeEngineOptions) {
    this.manifest = options.manifest;
    this.#options = options;
  }

  /**
   * Runs a forward pass on `tokens` (`[rows, d_model]`); 503 when over capacity.
   * `timing`, when given, hears where the request's time goes.
   */
  async infer(
    tokens: Float32Array,
    rows: number,
    timing?: RequestTiming,
  ): Promise<MoeForwardResult> {
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
      const result = await this.#forward(tokens, rows, {
        temperature: this.#options.temperature,
        ...(this.#bias !== undefined ? { bias: this.#bias } : {}),
        ...(timing ? { timing } : {}),
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

  /**
   * Sets (or clears, with `null`) the live routing-only bias, `[layers][experts]` of
   * finite numbers; a bad value throws and leaves the active bias unchanged.
   */
  setRoutingBias(bias: number[][] | null): RoutingBiasSummary {
    this.#bias = parseRoutingBias(bias, {
      layers: this.manifest.layers,
      experts: this.manifest.experts,
    });
    return this.routingBias();
  }

  /** Whether a routing-only bias is active, and its largest |b| per layer. */
  routingBias(): RoutingBiasSummary {
    return summarizeRoutingBias(this.#bias);
  }

  /**
   * A forward pass on this engine's runner with explicit `bias`/`onGateLogits` (the live
   * bias is not applied), outside admission control and the request counters: for
   * internal evaluations on a few recorded rows, which callers must bound themselves.
   */
  async probe(
    tokens: Float32Array,
    rows: number,
    options: Pick<MoeForwardOptions, "bias" | "onGateLogits"> = {},
  ): Promise<MoeForwardResult> {
    return await this.#forward(tokens, rows, {
      ...options,
      temperature: this.#options.temperature,
    });
  }

  #forward(tokens: Float32Array, rows: number, options: ForwardOptions): Promise<MoeForwardResult> {
    const { layers, runner } = this.#options;
    return layers
      ? forwardLayers(tokens, rows, { ...options, manifest: this.manifest, path: layers })
      : forwardMoe(tokens, rows, { ...options, manifest: this.manifest, runner: runner! });
  }

  /** A snapshot of the counters. */
  stats(): EngineStats {
    return { ...this.#stats };
  }
}
