/** @module The live dashboard: page, assets, SSE snapshot stream and the load timeline. */
export * from "./dashboard_routes.ts";
export * from "./dashboard_snapshot.ts";
export * from "./load_timeline.ts";
export * from "./snapshot_stream.ts";
export * from "./static_assets.ts";
