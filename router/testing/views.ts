/**
 * @module Test helpers: backend snapshots and a seeded random source.
 */
import type { BackendView } from "../pool/backend_view.ts";

/** A healthy backend snapshot with the given id and in-flight count. */
export function backendView(id: string, inFlight = 0): BackendView {
  return {
    id,
    name: id,
    url: `http://${id}`,
    healthy: true,
    inFlight,
    models: ["tiny"],
    details: undefined,
    checkedAt: undefined,
    lastError: undefined,
  };
}

/** A deterministic uniform [0, 1) source (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
