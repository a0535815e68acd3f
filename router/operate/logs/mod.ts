/** @module Log queries: the LogQL subset, its evaluator, the log stores and `GET /api/logs`. */
export * from "./logql_ast.ts";
export * from "./logql_parser.ts";
export * from "./log_pipeline.ts";
export * from "./query_range_params.ts";
export * from "./streams_result.ts";
export * from "./log_store.ts";
export * from "./local_log_store.ts";
export * from "./loki_log_store.ts";
export * from "./create_log_store.ts";
export * from "./log_routes.ts";
