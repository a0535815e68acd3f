/**
 * @module Scalers the pre-warm job publishes its recommendation to.
 *
 * - `advisory`: reports only (the decision log and `GET /api/prewarm` carry it).
 * - `webhook`: POSTs the recommendation as JSON to `prewarm.scaler_webhook` with a time
 *   limit; a failure is an outcome, never an exception.
 * - `local`: see `local_scaler.ts` (starts backend processes).
 */
import { callJson } from "../../runtime/call_json.ts";
import type { Clock } from "../../runtime/clock.ts";
import type { FetchLike } from "../../runtime/fetch_like.ts";
import type { Scaler, ScalerOutcome, ScalingRecommendation } from "./prewarm_types.ts";

/** Reports the recommendation and does nothing else. */
export class AdvisoryScaler implements Scaler {
  readonly name = "advisory";

  publish(recommendation: ScalingRecommendation): Promise<ScalerOutcome> {
    const change = recommendation.target === recommendation.current
      ? "no change"
      : `${recommendation.current} → ${recommendation.target} backends`;
    return Promise.resolve({ scaler: this.name, status: "reported", detail: change });
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

/** The body a webhook receives. */
export interface WebhookBody {
  source: "switchyard-prewarm";
  recommendation: ScalingRecommendation;
}

/** POSTs `{source, recommendation}` to an orchestrator; never throws. */
export class WebhookScaler implements Scaler {
  readonly name = "webhook";
  readonly #options: WebhookScalerOptions;

  constructor(options: WebhookScalerOptions) {
    this.#options = options;
  }

  async publish(recommendation: ScalingRecommendation): Promise<ScalerOutcome> {
    const body: WebhookBody = { source: "switchyard-prewarm", recommendation };
    const answer = await callJson(this.#options, this.#options.url, {
      method: "POST",
      body,
      timeoutMs: this.#options.timeoutMs ?? 5000,
    });
    return answer.ok
      ? { scaler: this.name, status: "sent", detail: `HTTP ${answer.status}` }
      : { scaler: this.name, status: "failed", detail: `webhook: ${answer.reason}` };
  }
}
