/** @module The edge router: app factory, in-process server, pool, policies, logging. */
export * from "./app.ts";
export * from "./load/mod.ts";
export * from "./observe/mod.ts";
export * from "./pool/mod.ts";
export * from "./routing/mod.ts";
export * from "./runtime/mod.ts";
export * from "./server.ts";
export * from "../shared/version.ts";
