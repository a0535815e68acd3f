/** @module The pre-warm job: prediction, placement and warming ahead of load, scalers, API. */
export * from "./capacity.ts";
export * from "./create_prewarm.ts";
export * from "./local_scaler.ts";
export * from "./needed_parts.ts";
export * from "./predict_load.ts";
export * from "./prewarm_history.ts";
export * from "./prewarm_job.ts";
export * from "./prewarm_routes.ts";
export * from "./prewarm_sources.ts";
export * from "./prewarm_types.ts";
export * from "./recommend.ts";
export * from "./residency_client.ts";
export * from "./run_prewarm.ts";
export * from "./scalers.ts";
