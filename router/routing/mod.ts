/** @module Routing policies: choose the entry backend for each request. */
export * from "./create_policy.ts";
export * from "./load_weighted.ts";
export * from "./policy.ts";
export * from "./power_of_two.ts";
export * from "./round_robin.ts";
