/** @module Test fakes: in-memory backends, a wired harness, snapshots, seeded random. */
export * from "./fake_backend.ts";
export * from "./harness.ts";
export * from "./load_reports.ts";
export * from "./views.ts";
