/** @module Scheduled traffic events: schema, KV store, admin routes. */
export * from "./event_routes.ts";
export * from "./event_store.ts";
export * from "./scheduled_event.ts";
