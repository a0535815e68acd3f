/** @module Injected runtime adapters: clock, timers and fetch. */
export * from "./clock.ts";
export * from "./fetch_like.ts";
export * from "./manual_clock.ts";
