/**
 * @module Test helpers: backend snapshots and a seeded random source.
 */
import type { BackendView } from "../../../router/serve/pool/backend_view.ts";
import { createRandom } from "../../../tools/model/prng.ts";

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

/** A deterministic uniform [0, 1) source (the project's mulberry32, shared with tools). */
export const seededRandom: (seed: number) => () => number = createRandom;
