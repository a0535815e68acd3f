/** @module Mixture-of-experts math of the backend: gated routing, gather and weighted combine. */
export * from "./routing.ts";
export * from "./combine.ts";
