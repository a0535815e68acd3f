/**
 * @module The router's overload guards, built once from config and shared by the app
 * (admission, forwarding) and `/metrics`: admission bounds, body-reader slots, the retry budget and the
 * retry counts.
 */
import type { Config } from "../../shared/config.ts";
import type { Logger } from "../../shared/logger.ts";
import type { RetryCause } from "./forward/forward_infer.ts";
import { RetryBudget } from "./forward/retry_budget.ts";
import type { Clock } from "../runtime/clock.ts";
import { Admission } from "./admission/admission.ts";
import { BodyReaders } from "./admission/body_readers.ts";

/** Admission, the retry budget and retry counts. */
export interface RouterGuards {
  admission: Admission;
  /** Bodies being read (apart from `admission`'s requests in flight). */
  readers: BodyReaders;
  budget: RetryBudget;
  /** Retries so far by the cause of the failed attempt. */
  retries: Map<RetryCause, number>;
}

/** Guards from `router.admission` and `router.retry`. */
export function createGuards(
  config: Pick<Config, "router">,
  deps: { clock: Clock; logger: Logger },
): RouterGuards {
  const { admission, retry } = config.router;
  return {
    admission: new Admission({
      maxInFlight: admission.max_in_flight,
      maxPerBackend: admission.max_in_flight_per_backend,
    }, deps),
    readers: new BodyReaders({
      maxReaders: admission.max_body_readers,
      graceMs: admission.reader_grace,
    }, deps.clock),
    budget: new RetryBudget({
      ratio: retry.budget_ratio,
      minPerSecond: retry.budget_min_per_second,
    }),
    retries: new Map(),
  };
}
