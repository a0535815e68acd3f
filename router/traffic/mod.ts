/** @module Traffic series: recording (memory → KV per bucket) and reading them back. */
export * from "./affinity.ts";
export * from "./bucket_traffic.ts";
export * from "./series_key.ts";
export * from "./traffic_recorder.ts";
export * from "./traffic_store.ts";
