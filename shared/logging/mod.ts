/** @module The log pipeline: stdout, rotating local files and Grafana Loki shipping. */
export * from "./loki_push.ts";
export * from "./loki_shipper.ts";
export * from "./rotating_file.ts";
export * from "./service_logger.ts";
