/** @module Load reports: polling backends, rates, balancedness, history and the API body. */
export * from "./balancedness.ts";
export * from "./load_api.ts";
export * from "./load_collector.ts";
export * from "./load_history.ts";
export * from "./load_rates.ts";
export * from "./pool_load.ts";
