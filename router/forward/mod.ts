/** @module Forwarding inference requests to backends (pick, count, retry, pass through). */
export * from "./backend_exchange.ts";
export * from "./forward_infer.ts";
