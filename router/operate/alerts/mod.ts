/** @module Alerts: rules over the pool's load, hysteresis, the manager, API and webhook. */
export * from "./alert_conditions.ts";
export * from "./alert_evaluator.ts";
export * from "./alert_json.ts";
export * from "./alert_manager.ts";
export * from "./alert_routes.ts";
export * from "./alert_settings.ts";
export * from "./alert_store.ts";
export * from "./alert_types.ts";
export * from "./alert_webhook.ts";
