/**
 * @module What the router's Hono app is made of: its injected dependencies, the state
 * KV's part of readiness and the app's Hono environment.
 */
import type { RouterConfig } from "../../shared/config.ts";
import type { InputFaults } from "../../shared/input_faults.ts";
import type { Logger } from "../../shared/logger.ts";
import type { RoutingPolicy } from "./entry/policy.ts";
import type { RouterGuards } from "./guards.ts";
import type { InferenceObserver } from "./observe/inference_event.ts";
import type { InferVariables } from "./observe/observe_inference.ts";
import type { BackendPool } from "./pool/backend_pool.ts";
import type { Clock } from "../runtime/clock.ts";
import type { FetchLike } from "../runtime/fetch_like.ts";

/** Everything the router app needs, injected. */
export interface AppDeps {
  config: RouterConfig;
  pool: BackendPool;
  policy: RoutingPolicy;
  logger: Logger;
  fetch: FetchLike;
  clock: Clock;
  /** Told about every finished `POST /v2/models/:model/infer` (request log, metrics). */
  observers?: readonly InferenceObserver[];
  /** Counts clients that disconnect mid-body and bodies past `limits.body_timeout`. */
  inputFaults?: InputFaults;
  /** Admission and retry budget; default built from `config` (metrics read the same). */
  guards?: RouterGuards;
  /** Told when describing a request or an observer failed (counted and logged there). */
  onObserverError?: (kind: string, error: unknown) => void;
  /** Whether the state KV can be read (readiness); absent: not part of readiness. */
  state?: () => Promise<StateReadiness>;
}

/** The state KV's part of readiness (the wiring checks the KV). */
export interface StateReadiness {
  ok: boolean;
  kv: string;
  /** Why not, when not ok. */
  error?: string;
}

/** Hono environment of the router app. */
export type RouterEnv = { Variables: InferVariables };
