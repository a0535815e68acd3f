/**
 * @module Scalers the pre-warm job asks for capacity ("N backends ready by T"); every one
 * implements {@linkcode Scaler} and passes `scaler_contract_test.ts`.
 *
 * - `advisory`: reports only (the decision log and `GET /api/prewarm` carry it); it adds
 *   nothing, so a contract that needs more than the pool escalates.
 * - `webhook`: POSTs `{source, contract, target, current, ready_by, deadline_s, remove,
 *   …}` to `prewarm.scaler_webhook` within `prewarm.scaler_timeout`; a failure or a hang
 *   is an outcome, never an exception. New backends join through discovery.
 * - `kubernetes` (`desired_scaler.ts`): publishes the desired backend count that KEDA's
 *   metrics-api scaler or an HPA on an external metric reads.
 * - `local` (`local_scaler.ts`): asks the launcher (`deno task start`) to start and stop
 *   backend processes under its supervisor.
 */
import { callJson } from "../../runtime/call_json.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import type { Scaler, ScaleRequest, ScalerOutcome } from "./prewarm_types.ts";

/** `current → target` or `no change`, for outcomes. */
export function changeOf(request: ScaleRequest): string {
  const removing = request.remove.length > 0 ? `, stop ${request.remove.join(", ")}` : "";
  return request.target === request.current
    ? `no change${removing}`
    : `${request.current} → ${request.target} backends${
      request.readyBy === null ? "" : ` by ${new Date(request.readyBy).toISOString()}`
    }${removing}`;
}

/** Reports the request and does nothing else. */
export class AdvisoryScaler implements Scaler {
  readonly name = "advisory";
  readonly acts = false;

  scale(request: ScaleRequest): Promise<ScalerOutcome> {
    return Promise.resolve({ scaler: this.name, status: "reported", detail: changeOf(request) });
  }
}

/** Options of {@linkcode WebhookScaler}. */
export interface WebhookScalerOptions {
  url: string;
  fetch: FetchLike;
  clock: Clock;
  /** Limit of one POST; default 5000 ms. */
  timeoutMs?: number;
}

/** The body a webhook receives: the contract's target and deadline, and what to stop. */
export interface WebhookBody {
  source: "switchyard-prewarm";
  model: string | null;
  /** The contract (`c1`, …), null for a scale-down outside one. */
  contract: string | null;
  /** Backends the pool has or was promised. */
  current: number;
  target: number;
  /** ISO time by which `target` backends must be ready; null when scaling down. */
  ready_by: string | null;
  /** Seconds from the request to `ready_by` (rounded down); null when scaling down. */
  deadline_s: number | null;
  /** URLs of backends drained and ready to stop. */
  remove: string[];
  predicted_tokens_per_s: number | null;
  capacity_per_backend: number | null;
  threshold: number;
  reason: string;
}

/** POSTs the request to an orchestrator; never throws. */
export class WebhookScaler implements Scaler {
  readonly name = "webhook";
  readonly acts = true;
  readonly #options: WebhookScalerOptions;

  constructor(options: WebhookScalerOptions) {
    this.#options = options;
  }

  async scale(request: ScaleRequest): Promise<ScalerOutcome> {
    const now = this.#options.clock.now();
    const body: WebhookBody = {
      source: "switchyard-prewarm",
      model: request.model,
      contract: request.contract,
      current: request.current,
      target: request.target,
      ready_by: request.readyBy === null ? null : new Date(request.readyBy).toISOString(),
      deadline_s: request.readyBy === null
        ? null
        : Math.max(0, Math.floor((request.readyBy - now) / 1000)),
      remove: request.remove,
      predicted_tokens_per_s: request.predictedTokensPerS,
      capacity_per_backend: request.capacityPerBackend,
      threshold: request.threshold,
      reason: request.reason,
    };
    const answer = await callJson(this.#options, this.#options.url, {
      method: "POST",
      body,
      timeoutMs: this.#options.timeoutMs ?? 5000,
    });
    return answer.ok
      ? { scaler: this.name, status: "sent", detail: `${changeOf(request)}: HTTP ${answer.status}` }
      : { scaler: this.name, status: "failed", detail: `webhook: ${answer.reason}` };
  }
}
