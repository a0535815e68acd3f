/** @module Load reports: polling backends, rates, history and the API body. */
export * from "./load_api.ts";
export * from "./load_collector.ts";
export * from "./load_history.ts";
export * from "./load_rates.ts";
export * from "./pool_load.ts";
