/** @module Admin API routes (state changes need `auth.admin_token`). */
export * from "./plan_routes.ts";
