/**
 * @module The router's parts that are created after the parts that call them: the app
 * registers the routes the balancing and the operator API hang on, while the load rounds,
 * alerts and metrics built before it read them. They read these fields when called, never
 * while the router is wired.
 */
import type { createApp } from "../serve/app.ts";
import type { Balancing } from "./balancing.ts";
import type { OperatorApi } from "./operator_api.ts";

/** Filled in as `buildRouter` creates each part; `undefined` until then (or without KV). */
export interface LateParts {
  app?: ReturnType<typeof createApp>;
  balancing?: Balancing | undefined;
  operatorApi?: OperatorApi;
}
