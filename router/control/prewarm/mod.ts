/** @module The pre-warm job: capacity contracts ahead of load, scalers, lead time, API. */
export * from "./capacity.ts";
export * from "./capacity_contract.ts";
export * from "./capacity_controller.ts";
export * from "./capacity_plan.ts";
export * from "./create_prewarm.ts";
export * from "./desired_scaler.ts";
export * from "./lead_time.ts";
export * from "./local_scaler.ts";
export * from "./predict_load.ts";
export * from "./prewarm_history.ts";
export * from "./prewarm_job.ts";
export * from "./prewarm_routes.ts";
export * from "./prewarm_sources.ts";
export * from "./prewarm_types.ts";
export * from "./run_prewarm.ts";
export * from "./scalers.ts";
