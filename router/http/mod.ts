/** @module HTTP edge helpers: request ids. */
export * from "./request_id.ts";
