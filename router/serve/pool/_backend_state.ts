/**
 * @module The pool's mutable record of one backend, and its read-only snapshot.
 */
import type { BackendRole, BackendView } from "./backend_view.ts";
import type { CatalogEntry } from "./model_catalog.ts";

/** What the pool knows about one backend. */
export interface BackendState {
  id: string;
  url: string;
  status: "unknown" | "up" | "down";
  /** Whether it takes new requests (`active`) or waits (`standby`) or drains (`draining`). */
  role: BackendRole;
  inFlight: number;
  /** Models it served when asked, by name. */
  models: Map<string, CatalogEntry>;
  /** Known model names it answered 404 for (cleared when it comes back up). */
  missing: Set<string>;
  details: Record<string, unknown> | undefined;
  checkedAt: number | undefined;
  lastError: string | undefined;
}

/** A backend not checked yet. */
export function newBackendState(
  id: string,
  url: string,
  role: BackendRole = "active",
): BackendState {
  return {
    id,
    url,
    status: "unknown",
    role,
    inFlight: 0,
    models: new Map(),
    missing: new Set(),
    details: undefined,
    checkedAt: undefined,
    lastError: "not checked yet",
  };
}

/** A frozen snapshot for policies and endpoints. */
export function snapshot(backend: BackendState): BackendView {
  const reported = backend.details?.["backend_id"];
  return Object.freeze({
    id: backend.id,
    name: typeof reported === "string" && reported !== "" ? reported : backend.id,
    url: backend.url,
    healthy: backend.status === "up",
    role: backend.role,
    inFlight: backend.inFlight,
    models: [...backend.models.keys()],
    details: backend.details,
    checkedAt: backend.checkedAt,
    lastError: backend.lastError,
  });
}
