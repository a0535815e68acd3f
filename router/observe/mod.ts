/** @module Observability: an in-memory logger for tests (the logger lives in shared/). */
export * from "./memory_logger.ts";
