/** @module The backend pool: health checks, the model catalog and in-flight counts. */
export * from "./backend_client.ts";
export * from "./backend_pool.ts";
export * from "./backend_view.ts";
export * from "./model_catalog.ts";
